package tidemark.landing;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Lands a DataFrame in a Postgres table with COPY, straight from the executors' rows: no
 * Python worker, no Arrow, nothing collected on the driver but one small result per partition.
 *
 * <p>COPY's binary format when every column has an exact binary form for its Postgres type
 * (Postgres then parses no text: about twice as fast), else the text format.
 */
public final class CopyLanding {
    private CopyLanding() {}

    /** "binary" or "text": the COPY format `land` uses for these columns. */
    public static String format(Dataset<Row> frame, String[] targetTypes) {
        return binaryWriters(frame.schema().fields(), targetTypes) != null ? "binary" : "text";
    }

    /**
     * Lands `frame`, whose Spark partition i is partition {@code partitionNumbers[i]} of run `runId`.
     *
     * @param copyStatement {@code copy t (columns..., run id, partition) from stdin}, without options;
     *     without the run id and partition when not {@code tagged}
     * @param markStatement an update with parameters rows, run id and partition number, marking it landed
     * @return the format used
     */
    public static String land(
            Dataset<Row> frame,
            String[] targetTypes,
            String url,
            Properties properties,
            String copyStatement,
            String markStatement,
            long runId,
            boolean tagged,
            int[] partitionNumbers) {
        int partitions = frame.rdd().getNumPartitions();
        if (partitions != partitionNumbers.length) {
            throw new IllegalArgumentException(
                    partitions + " Spark partitions but " + partitionNumbers.length + " partition numbers");
        }
        PartitionLander lander = lander(
                frame.schema().fields(), targetTypes, url, properties, copyStatement, markStatement, runId,
                tagged, partitionNumbers);
        frame.queryExecution().toRdd().toJavaRDD().mapPartitionsWithIndex(lander, false).collect();
        return lander.format();
    }

    /**
     * Lands `frame`, a read of whole files (none split between tasks), each file as the partition of
     * run `runId` that `fileNumbers` gives its path (as Hadoop prints it), in its own transaction.
     *
     * @param fileColumn the column that holds each row's file (its path as Hadoop prints it), written here
     *     as the rows are read
     * @param rowColumn the column that holds each row's place in its file (from 1), written likewise, or -1
     * @return one {file number, rows landed, "1" if it had landed before, why it could not be read and
     *     which record (from 1), or null and null} per file Spark read rows of
     */
    public static String[][] landFiles(
            Dataset<Row> frame,
            String[] targetTypes,
            String url,
            Properties properties,
            String copyStatement,
            String markStatement,
            long runId,
            Map<String, Integer> fileNumbers,
            int fileColumn,
            int rowColumn) {
        PartitionLander lander = lander(
                frame.schema().fields(), targetTypes, url, properties, copyStatement, markStatement, runId,
                true, new int[0]);
        boolean binary = lander.format().equals("binary");
        UTF8String[] filePath = new UTF8String[1];
        long[] rowNumber = new long[1];
        lander.writeInstead(fileColumn, FileValueWriter.path(filePath, binary));
        if (rowColumn >= 0) {
            lander.writeInstead(rowColumn, FileValueWriter.rowNumber(rowNumber, binary));
        }
        FileLander files = new FileLander(lander, new HashMap<>(fileNumbers), filePath, rowNumber);
        List<String[]> results =
                frame.queryExecution().toRdd().toJavaRDD().mapPartitionsWithIndex(files, false).collect();
        return results.toArray(new String[0][]);
    }

    /** The lander of rows with these fields: binary COPY when every field has an exact binary form. */
    static PartitionLander lander(
            StructField[] fields,
            String[] targetTypes,
            String url,
            Properties properties,
            String copyStatement,
            String markStatement,
            long runId,
            boolean tagged,
            int[] partitionNumbers) {
        FieldWriter[] writers = binaryWriters(fields, targetTypes);
        boolean binary = writers != null;
        if (!binary) {
            writers = textWriters(fields, targetTypes);
        }
        String statement = binary ? copyStatement + " (format binary)" : copyStatement;
        return new PartitionLander(
                url, properties, statement, markStatement, runId, tagged, partitionNumbers, writers, binary);
    }

    private static FieldWriter[] binaryWriters(StructField[] fields, String[] targetTypes) {
        if (fields.length != targetTypes.length) {
            throw new IllegalArgumentException(fields.length + " columns but " + targetTypes.length + " target types");
        }
        FieldWriter[] writers = new FieldWriter[fields.length];
        for (int i = 0; i < fields.length; i++) {
            writers[i] = BinaryFields.forColumn(fields[i].dataType(), targetTypes[i]);
            if (writers[i] == null) {
                return null;
            }
        }
        return writers;
    }

    private static FieldWriter[] textWriters(StructField[] fields, String[] targetTypes) {
        FieldWriter[] writers = new FieldWriter[fields.length];
        for (int i = 0; i < fields.length; i++) {
            writers[i] = TextFields.forColumn(fields[i].dataType(), targetTypes[i]);
            if (writers[i] == null) {
                throw new IllegalArgumentException(
                        "column " + fields[i].name() + ": cannot land Spark type " + fields[i].dataType().simpleString());
            }
        }
        return writers;
    }
}
