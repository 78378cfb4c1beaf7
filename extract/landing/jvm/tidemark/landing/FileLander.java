package tidemark.landing;

import java.io.Serializable;
import java.net.URI;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;

import org.apache.hadoop.fs.Path;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.rdd.InputFileBlockHolder;
import org.apache.spark.sql.catalyst.InternalRow;

/**
 * What each Spark task of a file landing runs. A task reads whole files, one after another (the read is
 * planned so that no file is split): each lands as {@link PartitionLander} lands a partition, in its own
 * transaction, under the file's number in the run's plan, its rows numbered from 1 in the row column.
 *
 * <p>A file Spark cannot read (a malformed record, a corrupt file, a header that does not fit the
 * columns) fails alone: its COPY rolls back and the task says why instead of failing the job, so the
 * other tasks' files still land. The task's reader cannot go on past it: the files after it in the
 * same task are left unread, for the caller to read again. A failure to write to Postgres fails the job.
 */
final class FileLander implements Function2<Integer, Iterator<InternalRow>, Iterator<String[]>>, Serializable {
    private static final long serialVersionUID = 1L;

    private final PartitionLander lander;
    /** The plan's number of each file, by its path as Hadoop prints it. */
    private final HashMap<String, Integer> numbers;
    /** The row's place in its file, which the row-number column's writer writes. */
    private final long[] rowNumber;

    FileLander(PartitionLander lander, HashMap<String, Integer> numbers, long[] rowNumber) {
        this.lander = lander;
        this.numbers = numbers;
        this.rowNumber = rowNumber;
    }

    /**
     * One {file number, rows landed, "1" if it had landed before, why it could not be read, the record
     * it could not (from 1)} per file the task read rows of, the last two null when it landed.
     */
    @Override
    public Iterator<String[]> call(Integer index, Iterator<InternalRow> rows) {
        TaskRows task = new TaskRows(rows, rowNumber);
        List<String[]> results = new ArrayList<>();
        try {
            for (String path = task.nextFile(); path != null; path = task.nextFile()) {
                int number = number(path);
                try {
                    long[] landed = lander.land(number, task.fileRows()).next();
                    results.add(new String[] {
                        Integer.toString(number), Long.toString(landed[1]), Long.toString(landed[2]), null, null
                    });
                } catch (SQLException | RuntimeException e) {
                    if (e instanceof UnreadableFile) {
                        throw (UnreadableFile) e;
                    }
                    throw LandingFailure.of("file " + path, e);
                }
            }
        } catch (UnreadableFile e) {
            String why = LandingFailure.describe(rootCause(e.getCause()));
            results.add(new String[] {
                Integer.toString(number(e.path)), "-1", "0", why, Long.toString(e.rowsRead + 1)
            });
        }
        return results.iterator();
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
        private final long[] rowNumber;
        private Object openUrl;
        private String openPath = "";
        private InternalRow ahead;
        private String aheadPath;
        private boolean ended;
        private String current = "";
        /** The failure to open the file after the current one, raised when the caller moves on to it. */
        private UnreadableFile failed;

        TaskRows(Iterator<InternalRow> rows, long[] rowNumber) {
            this.rows = rows;
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
