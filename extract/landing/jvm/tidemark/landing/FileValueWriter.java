package tidemark.landing;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Writes what the file lander knows of a row, whatever the row holds in that column: the path of its file
 * (text) or its place in that file (bigint), both set as the rows are read.
 */
final class FileValueWriter implements FieldWriter {
    private static final long serialVersionUID = 1L;

    /** The file's path, or null to write the row's place. */
    private final UTF8String[] path;
    private final long[] rowNumber;
    private final boolean binary;

    private FileValueWriter(UTF8String[] path, long[] rowNumber, boolean binary) {
        this.path = path;
        this.rowNumber = rowNumber;
        this.binary = binary;
    }

    static FileValueWriter path(UTF8String[] path, boolean binary) {
        return new FileValueWriter(path, null, binary);
    }

    static FileValueWriter rowNumber(long[] rowNumber, boolean binary) {
        return new FileValueWriter(null, rowNumber, binary);
    }

    @Override
    public void write(InternalRow row, int ordinal, CopyBuffer out) {
        if (path != null && binary) {
            out.putInt(path[0].numBytes());
            out.putUtf8(path[0]);
        } else if (path != null) {
            TextFields.putEscaped(out, path[0]);
        } else if (binary) {
            out.putInt(8);
            out.putLong(rowNumber[0]);
        } else {
            out.putAscii(Long.toString(rowNumber[0]));
        }
    }
}
