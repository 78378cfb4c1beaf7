package tidemark.landing;

import java.io.Serializable;
import java.net.URI;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;

import org.apache.hadoop.fs.Path;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.rdd.InputFileBlockHolder;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.unsafe.types.UTF8String;
import org.postgresql.copy.CopyIn;

/**
 * What each Spark task of a file landing runs. A task reads whole files, one after another (the read is
 * planned so that no file is split between tasks): it lands them in one COPY, each row under its file's
 * number in the run's plan and numbered from 1 in its file (the row column), and marks each file landed
 * in the same transaction. A task's files therefore land together or not at all.
 *
 * <p>A file Spark cannot read (a malformed record, a corrupt file, a header that does not fit the
 * columns) fails alone: the task's transaction rolls back and the task says which file and why instead
 * of failing the job, so other tasks' files still land, and the caller reads the failed task's other
 * files again, a task each. A failure to write to Postgres fails the job.
 */
final class FileLander implements Function2<Integer, Iterator<InternalRow>, Iterator<String[]>>, Serializable {
    private static final long serialVersionUID = 1L;

    private final PartitionLander lander;
    /** The plan's number of each file, by its path as Hadoop prints it. */
    private final HashMap<String, Integer> numbers;
    /** The row's file and its place in it, which the writers of the file and row columns write. */
    private final UTF8String[] filePath;
    private final long[] rowNumber;

    FileLander(PartitionLander lander, HashMap<String, Integer> numbers, UTF8String[] filePath, long[] rowNumber) {
        this.lander = lander;
        this.numbers = numbers;
        this.filePath = filePath;
        this.rowNumber = rowNumber;
    }

    /**
     * One {file number, rows landed, "1" if it had landed before, why it could not be read, the record
     * it could not (from 1)} per file the task landed, the last two null; or one for the file it could
     * not read, and none for the others.
     */
    @Override
    public Iterator<String[]> call(Integer index, Iterator<InternalRow> rows) {
        TaskRows task = new TaskRows(rows, filePath, rowNumber);
        List<long[]> landed = new ArrayList<>();
        String path = null;
        try (TaskCopy copy = new TaskCopy()) {
            for (path = task.nextFile(); path != null; path = task.nextFile()) {
                int number = number(path);
                landed.add(new long[] {number, lander.write(number, task.fileRows(), copy.out())});
            }
            String already = copy.commit(landed) ? "1" : "0";
            List<String[]> results = new ArrayList<>();
            for (long[] file : landed) {
                results.add(new String[] {Long.toString(file[0]), Long.toString(file[1]), already, null, null});
            }
            return results.iterator();
        } catch (UnreadableFile e) {
            // The task's COPY is rolled back whole: the files before this one are read again, alone.
            String why = LandingFailure.describe(rootCause(e.getCause()));
            String record = Long.toString(e.rowsRead + 1);
            String[] failed = {Integer.toString(number(e.path)), "-1", "0", why, record};
            return List.<String[]>of(failed).iterator();
        } catch (SQLException | RuntimeException e) {
            throw LandingFailure.of("file " + path, e);
        }
    }

    /**
     * A task's files in one COPY and one transaction with their marks: thousands of small files would
     * otherwise cost a COPY and a commit each, more than their rows.
     */
    private final class TaskCopy implements AutoCloseable {
        private Connection conn;
        private CopyIn copy;
        private CopyBuffer out;

        CopyBuffer out() throws SQLException {
            if (out == null) {
                conn = lander.connect();
                copy = lander.startCopy(conn);
                out = new CopyBuffer(copy);
                lander.begin(out);
            }
            return out;
        }

        /** Ends the COPY, marks each {file number, rows} landed and commits; true if all had landed before. */
        boolean commit(List<long[]> files) throws SQLException {
            if (out == null) {
                return false;
            }
            lander.end(out, copy);
            int already = 0;
            for (long[] file : files) {
                already += lander.mark(conn, (int) file[0], file[1]) ? 0 : 1;
            }
            if (already != 0 && already != files.size()) {
                throw new IllegalStateException(already + " of the task's " + files.size() + " files had landed");
            }
            if (already == 0) {
                conn.commit();
            }
            return already != 0;
        }

        @Override
        public void close() throws SQLException {
            if (conn == null) {
                return;
            }
            try {
                if (copy.isActive()) {
                    copy.cancelCopy();
                }
                conn.rollback(); // nothing to roll back once committed
            } finally {
                conn.close();
            }
        }
    }

    private int number(String path) {
        Integer number = numbers.get(path);
        if (number == null) {
            throw new IllegalStateException("Spark read " + path + ", which is not in the run's plan");
        }
        return number;
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

    /** A read of file `path` failed; `rowsRead` of its rows were read before. */
    static final class UnreadableFile extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final String path;
        final long rowsRead;

        UnreadableFile(String path, long rowsRead, Throwable cause) {
            super(cause);
            this.path = path;
            this.rowsRead = rowsRead;
        }
    }

    /**
     * A task's rows, file by file. Spark says which file a row is from only once it has read it (its open
     * file, a thread local), so each file's first row is read ahead while the file before it ends.
     */
    static final class TaskRows {
        private final Iterator<InternalRow> rows;
        private final UTF8String[] filePath;
        private final long[] rowNumber;
        private Object openUrl;
        private String openPath = "";
        private InternalRow ahead;
        private String aheadPath;
        private boolean ended;
        private String current = "";
        /** The failure to open the file after the current one, raised when the caller moves on to it. */
        private UnreadableFile failed;

        TaskRows(Iterator<InternalRow> rows, UTF8String[] filePath, long[] rowNumber) {
            this.rows = rows;
            this.filePath = filePath;
            this.rowNumber = rowNumber;
        }

        /** The next file with rows (its path), or null when the task has read them all. */
        String nextFile() {
            if (failed != null) {
                throw failed;
            }
            if (ahead == null) {
                readAhead();
            }
            if (ahead == null) {
                return null;
            }
            current = aheadPath;
            filePath[0] = UTF8String.fromString(current);
            rowNumber[0] = 0;
            return current;
        }

        /** The current file's rows. */
        Iterator<InternalRow> fileRows() {
            return new Iterator<InternalRow>() {
                @Override
                public boolean hasNext() {
                    if (ahead == null) {
                        try {
                            readAhead();
                        } catch (UnreadableFile e) {
                            if (e.path.equals(current)) {
                                throw e;
                            }
                            failed = e; // the next file's: this one ended whole, and lands
                        }
                    }
                    return ahead != null && aheadPath.equals(current);
                }

                @Override
                public InternalRow next() {
                    InternalRow row = ahead;
                    ahead = null;
                    rowNumber[0]++;
                    return row;
                }
            };
        }

        private void readAhead() {
            if (ended) {
                return;
            }
            try {
                if (rows.hasNext()) {
                    ahead = rows.next();
                    aheadPath = openPath();
                } else {
                    ended = true;
                }
            } catch (Exception e) { // Spark's own are checked exceptions, thrown from Scala undeclared
                ended = true; // a reader that failed cannot go on
                String at = openPath();
                throw new UnreadableFile(at, at.equals(current) ? rowNumber[0] : 0, e);
            }
        }

        private String openPath() {
            // The same object until Spark opens the next file: the path is worked out once a file.
            Object url = InputFileBlockHolder.getInputFilePath();
            if (url != openUrl) {
                openUrl = url;
                openPath = hadoopPath(url.toString());
            }
            return openPath;
        }
    }
}
