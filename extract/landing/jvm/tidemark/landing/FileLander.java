package tidemark.landing;

import java.io.Serializable;
import java.net.URI;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;

import org.apache.hadoop.fs.Path;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.rdd.InputFileBlockHolder;
import org.apache.spark.sql.catalyst.InternalRow;

/**
 * What each Spark task of a file landing runs. Its partition reads one whole file (the read is planned
 * so), landed as {@link PartitionLander} lands a partition, under that file's number in the run's plan.
 *
 * <p>A file Spark cannot read (a malformed record, a corrupt file, a header that does not fit the
 * columns) fails alone: its COPY rolls back and the task says why instead of failing the job, so every
 * other file still lands. A failure to write to Postgres still fails the job.
 */
final class FileLander implements Function2<Integer, Iterator<InternalRow>, Iterator<String[]>>, Serializable {
    private static final long serialVersionUID = 1L;

    private final PartitionLander lander;
    /** The plan's number of each file, by its path as Hadoop prints it. */
    private final HashMap<String, Integer> numbers;

    FileLander(PartitionLander lander, HashMap<String, Integer> numbers) {
        this.lander = lander;
        this.numbers = numbers;
    }

    /**
     * One {file number, rows landed, "1" if it had landed before, why it could not be read, the record
     * it could not (from 1)} per file the task opened, the last two null when it landed; nothing for a
     * task that opened none.
     */
    @Override
    public Iterator<String[]> call(Integer index, Iterator<InternalRow> rows) {
        FileRows read = new FileRows(rows);
        try {
            read.hasNext(); // opens the file, so that Spark says which it is
        } catch (UnreadableFile e) {
            return failed(read.path(), e);
        }
        String path = read.path();
        if (path.isEmpty()) {
            return List.<String[]>of().iterator();
        }
        int number = number(path);
        try {
            long[] landed = lander.land(number, read).next();
            return List.<String[]>of(new String[] {
                Integer.toString(number), Long.toString(landed[1]), Long.toString(landed[2]), null, null
            }).iterator();
        } catch (UnreadableFile e) {
            return failed(path, e);
        } catch (SQLException | RuntimeException e) {
            throw LandingFailure.of("file " + path, e);
        }
    }

    private int number(String path) {
        Integer number = numbers.get(path);
        if (number == null) {
            throw new IllegalStateException("Spark read " + path + ", which is not in the run's plan");
        }
        return number;
    }

    private Iterator<String[]> failed(String path, UnreadableFile e) {
        String why = LandingFailure.describe(rootCause(e.getCause()));
        String record = Long.toString(e.rowsRead + 1);
        return List.<String[]>of(new String[] {Integer.toString(number(path)), "-1", "0", why, record}).iterator();
    }

    /** The innermost cause: Spark wraps a parse error in two or three exceptions of its own. */
    private static Throwable rootCause(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        return cause;
    }

    /** The path as Hadoop prints it of a file Spark names by its URL ("" for none). */
    static String hadoopPath(String url) {
        return url.isEmpty() ? url : new Path(URI.create(url)).toString();
    }

    /** A read of the file failed; the rows before it were read. */
    static final class UnreadableFile extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final long rowsRead;

        UnreadableFile(long rowsRead, Throwable cause) {
            super(cause);
            this.rowsRead = rowsRead;
        }
    }

    /** The partition's rows, one file's: a failure to read them is an UnreadableFile, a second file an error. */
    static final class FileRows implements Iterator<InternalRow> {
        private final Iterator<InternalRow> rows;
        private Object openUrl;
        private String path = "";
        private long read;

        FileRows(Iterator<InternalRow> rows) {
            this.rows = rows;
        }

        /** The file the task's reader has open ("" before it opens one). */
        String path() {
            follow();
            return path;
        }

        private void follow() {
            // Spark keeps the open file's URL in a thread local, the same object until the next file.
            Object url = InputFileBlockHolder.getInputFilePath();
            if (url == openUrl) {
                return;
            }
            openUrl = url;
            String opened = hadoopPath(url.toString());
            if (!path.isEmpty() && !opened.isEmpty() && !opened.equals(path)) {
                throw new IllegalStateException("one task read two files: " + path + " and " + opened);
            }
            if (path.isEmpty()) {
                path = opened;
            }
        }

        @Override
        public boolean hasNext() {
            boolean more;
            try {
                more = rows.hasNext();
            } catch (Exception e) { // Spark's own are checked exceptions, thrown from Scala undeclared
                throw new UnreadableFile(read, e);
            }
            if (more) {
                follow();
            }
            return more;
        }

        @Override
        public InternalRow next() {
            try {
                InternalRow row = rows.next();
                read++;
                return row;
            } catch (Exception e) { // Spark's own are checked exceptions, thrown from Scala undeclared
                throw new UnreadableFile(read, e);
            }
        }
    }
}
