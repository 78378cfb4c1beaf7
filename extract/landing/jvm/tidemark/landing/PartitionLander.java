package tidemark.landing;

import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Iterator;
import java.util.List;
import java.util.Properties;

import org.apache.spark.api.java.function.Function2;
import org.apache.spark.sql.catalyst.InternalRow;
import org.postgresql.Driver;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;

/**
 * What each Spark task runs: its partition's rows in one COPY and, in the same transaction,
 * the partition marked landed. A partition therefore either landed whole and is recorded, or
 * left nothing; a retried task whose partition already landed rolls back.
 */
final class PartitionLander implements Function2<Integer, Iterator<InternalRow>, Iterator<long[]>>, Serializable {
    private static final long serialVersionUID = 1L;
    private static final byte[] BINARY_SIGNATURE = "PGCOPY\n\377\r\n\0".getBytes(StandardCharsets.ISO_8859_1);

    private final String url;
    private final Properties properties;
    private final String copyStatement;
    private final String markStatement;
    private final long runId;
    /** Whether each row ends with its run id and partition number (staging's last two columns). */
    private final boolean tagged;
    private final int[] partitionNumbers;
    private final FieldWriter[] writers;
    private final boolean binary;

    PartitionLander(
            String url,
            Properties properties,
            String copyStatement,
            String markStatement,
            long runId,
            boolean tagged,
            int[] partitionNumbers,
            FieldWriter[] writers,
            boolean binary) {
        this.url = url;
        this.properties = properties;
        this.copyStatement = copyStatement;
        this.markStatement = markStatement;
        this.runId = runId;
        this.tagged = tagged;
        this.partitionNumbers = partitionNumbers;
        this.writers = writers;
        this.binary = binary;
    }

    /** Column `ordinal` is written by `writer` (a value the lander knows, not the row). */
    void writeInstead(int ordinal, FieldWriter writer) {
        writers[ordinal] = writer;
    }

    String format() {
        return binary ? "binary" : "text";
    }

    /** Returns one {partition number, rows landed, 1 if it had landed before} per task. */
    @Override
    public Iterator<long[]> call(Integer index, Iterator<InternalRow> rows) {
        int number = partitionNumbers[index];
        try {
            return land(number, rows);
        } catch (SQLException | RuntimeException e) {
            throw LandingFailure.of("partition " + number, e);
        }
    }

    /** Lands `rows` as partition `number`: {number, rows landed, 1 if it had landed before}. */
    Iterator<long[]> land(int number, Iterator<InternalRow> rows) throws SQLException {
        long count = 0;
        boolean already;
        // The driver class directly: DriverManager sees only the JVM's own class path, not spark.jars.
        try (Connection conn = new Driver().connect(url, properties)) {
            conn.setAutoCommit(false);
            CopyIn copy = conn.unwrap(PGConnection.class).getCopyAPI().copyIn(copyStatement);
            try {
                CopyBuffer out = new CopyBuffer(copy);
                if (binary) {
                    out.putBytes(BINARY_SIGNATURE);
                    out.putInt(0); // flags
                    out.putInt(0); // header extension length
                }
                while (rows.hasNext()) {
                    InternalRow row = rows.next();
                    if (binary) {
                        writeBinary(row, number, out);
                    } else {
                        writeText(row, number, out);
                    }
                    count++;
                    out.sendWhenFull();
                }
                if (binary) {
                    out.putShort(-1);
                }
                out.send();
                copy.endCopy();
            } finally {
                if (copy.isActive()) {
                    copy.cancelCopy();
                }
            }
            try (PreparedStatement mark = conn.prepareStatement(markStatement)) {
                mark.setLong(1, count);
                mark.setLong(2, runId);
                mark.setInt(3, number);
                already = mark.executeUpdate() != 1;
            }
            if (already) {
                conn.rollback();
            } else {
                conn.commit();
            }
        }
        return List.of(new long[] {number, count, already ? 1 : 0}).iterator();
    }

    private void writeBinary(InternalRow row, int number, CopyBuffer out) {
        out.putShort(tagged ? writers.length + 2 : writers.length);
        for (int i = 0; i < writers.length; i++) {
            if (row.isNullAt(i)) {
                out.putInt(-1);
            } else {
                writers[i].write(row, i, out);
            }
        }
        if (tagged) {
            out.putInt(8);
            out.putLong(runId);
            out.putInt(4);
            out.putInt(number);
        }
    }

    private void writeText(InternalRow row, int number, CopyBuffer out) {
        for (int i = 0; i < writers.length; i++) {
            if (row.isNullAt(i)) {
                out.put((byte) '\\');
                out.put((byte) 'N');
            } else {
                writers[i].write(row, i, out);
            }
            out.put((byte) (tagged || i < writers.length - 1 ? '\t' : '\n'));
        }
        if (tagged) {
            out.putAscii(Long.toString(runId));
            out.put((byte) '\t');
            out.putAscii(Integer.toString(number));
            out.put((byte) '\n');
        }
    }
}
