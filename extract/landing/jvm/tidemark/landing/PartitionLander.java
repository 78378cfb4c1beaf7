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
        try (Connection conn = connect()) {
            return List.of(landOn(conn, number, rows)).iterator();
        }
    }

    /** A connection to the target, in a transaction of its own (not committed a statement at a time). */
    Connection connect() throws SQLException {
        // The driver class directly: DriverManager sees only the JVM's own class path, not spark.jars.
        Connection conn = new Driver().connect(url, properties);
        conn.setAutoCommit(false);
        return conn;
    }

    /**
     * Lands `rows` as partition `number` on `conn`, committed with its mark (rolled back if it had landed
     * before): {number, rows landed, 1 if it had landed before}. On a failure the transaction is rolled
     * back.
     */
    long[] landOn(Connection conn, int number, Iterator<InternalRow> rows) throws SQLException {
        long count;
        boolean already;
        try {
            CopyIn copy = startCopy(conn);
            try {
                CopyBuffer out = new CopyBuffer(copy);
                begin(out);
                count = write(number, rows, out);
                end(out, copy);
            } finally {
                if (copy.isActive()) {
                    copy.cancelCopy();
                }
            }
            already = !mark(conn, number, count);
        } catch (SQLException | RuntimeException e) {
            try {
                conn.rollback();
            } catch (SQLException broken) {
                e.addSuppressed(broken);
            }
            throw e;
        }
        if (already) {
            conn.rollback();
        } else {
            conn.commit();
        }
        return new long[] {number, count, already ? 1 : 0};
    }

    CopyIn startCopy(Connection conn) throws SQLException {
        return conn.unwrap(PGConnection.class).getCopyAPI().copyIn(copyStatement);
    }

    /** What a COPY's data starts with. */
    void begin(CopyBuffer out) {
        if (binary) {
            out.putBytes(BINARY_SIGNATURE);
            out.putInt(0); // flags
            out.putInt(0); // header extension length
        }
    }

    /** Writes `rows` as partition `number`'s; returns how many. */
    long write(int number, Iterator<InternalRow> rows, CopyBuffer out) throws SQLException {
        long count = 0;
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
        return count;
    }

    /** Ends the COPY's data and the COPY. */
    void end(CopyBuffer out, CopyIn copy) throws SQLException {
        if (binary) {
            out.putShort(-1);
        }
        out.send();
        copy.endCopy();
    }

    /** Marks partition `number` landed with `count` rows, in the COPY's transaction; false if it was already. */
    boolean mark(Connection conn, int number, long count) throws SQLException {
        try (PreparedStatement mark = conn.prepareStatement(markStatement)) {
            mark.setLong(1, count);
            mark.setLong(2, runId);
            mark.setInt(3, number);
            return mark.executeUpdate() == 1;
        }
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
