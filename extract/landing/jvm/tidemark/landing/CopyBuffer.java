package tidemark.landing;

import java.sql.SQLException;
import java.util.Arrays;

import org.apache.spark.TaskContext;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;
import org.postgresql.copy.CopyIn;

/** Bytes on their way into one COPY: filled row by row, handed to the server a block at a time. */
final class CopyBuffer {
    private static final int BLOCK = 1 << 19;

    private final CopyIn copy;
    private byte[] bytes = new byte[BLOCK * 2];
    private int length;

    CopyBuffer(CopyIn copy) {
        this.copy = copy;
    }

    /** Makes room for `extra` more bytes. */
    void reserve(int extra) {
        if (length + extra > bytes.length) {
            bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, length + extra));
        }
    }

    void put(byte value) {
        reserve(1);
        bytes[length++] = value;
    }

    void putShort(int value) {
        reserve(2);
        bytes[length++] = (byte) (value >>> 8);
        bytes[length++] = (byte) value;
    }

    void putInt(int value) {
        reserve(4);
        bytes[length++] = (byte) (value >>> 24);
        bytes[length++] = (byte) (value >>> 16);
        bytes[length++] = (byte) (value >>> 8);
        bytes[length++] = (byte) value;
    }

    void putLong(long value) {
        putInt((int) (value >>> 32));
        putInt((int) value);
    }

    void putBytes(byte[] value) {
        reserve(value.length);
        System.arraycopy(value, 0, bytes, length, value.length);
        length += value.length;
    }

    void putUtf8(UTF8String value) {
        int size = value.numBytes();
        reserve(size);
        value.writeToMemory(bytes, Platform.BYTE_ARRAY_OFFSET + length);
        length += size;
    }

    /** ASCII text, such as a formatted number. */
    void putAscii(String value) {
        int size = value.length();
        reserve(size);
        for (int i = 0; i < size; i++) {
            bytes[length++] = (byte) value.charAt(i);
        }
    }

    /** The decimal digits of `value`, zero-padded on the left to `width`. */
    void putDigits(long value, int width) {
        String digits = Long.toString(value);
        for (int i = digits.length(); i < width; i++) {
            put((byte) '0');
        }
        putAscii(digits);
    }

    int position() {
        return length;
    }

    /** Overwrites four bytes written earlier, at `at`: a field's length, known once it is written. */
    void patchInt(int at, int value) {
        bytes[at] = (byte) (value >>> 24);
        bytes[at + 1] = (byte) (value >>> 16);
        bytes[at + 2] = (byte) (value >>> 8);
        bytes[at + 3] = (byte) value;
    }

    /** Sends a block once enough has gathered; a cancelled task stops here. */
    void sendWhenFull() throws SQLException {
        if (length >= BLOCK) {
            send();
            TaskContext task = TaskContext.get();
            if (task != null) {
                task.killTaskIfInterrupted();
            }
        }
    }

    void send() throws SQLException {
        if (length > 0) {
            copy.writeToCopy(bytes, 0, length);
            length = 0;
        }
    }
}
