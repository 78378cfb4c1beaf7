package tidemark.landing;

import org.apache.spark.sql.catalyst.InternalRow;

/** Writes a row's place in its file (a bigint), which the file lander counts, whatever the row holds there. */
final class RowNumberWriter implements FieldWriter {
    private static final long serialVersionUID = 1L;

    private final long[] rowNumber;
    private final boolean binary;

    RowNumberWriter(long[] rowNumber, boolean binary) {
        this.rowNumber = rowNumber;
        this.binary = binary;
    }

    @Override
    public void write(InternalRow row, int ordinal, CopyBuffer out) {
        if (binary) {
            out.putInt(8);
            out.putLong(rowNumber[0]);
        } else {
            out.putAscii(Long.toString(rowNumber[0]));
        }
    }
}
