package tidemark.landing;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.Locale;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/** COPY's text format: any Spark value as the text Postgres parses into the column's type. */
final class TextFields {
    private static final byte[] HEX = {
        '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'
    };

    private TextFields() {}

    /**
     * The writer for a Spark type landing in a Postgres type, or null when there is none: an integer
     * into a date is a day number, a bigint into a timestamp microseconds since 1970-01-01 00:00 UTC
     * (how the source dialects read calendar values); anything else is written as its own type says.
     */
    static FieldWriter forColumn(DataType type, String targetType) {
        String target = targetType.toLowerCase(Locale.ROOT);
        int paren = target.indexOf('(');
        String base = (paren < 0 ? target : target.substring(0, paren)).trim();
        if (type instanceof IntegerType && base.equals("date")) {
            return (row, i, out) -> putDate(out, row.getInt(i), true);
        }
        if (type instanceof LongType && base.startsWith("timestamp")) {
            boolean zoned = base.equals("timestamptz") || base.endsWith("with time zone");
            return (row, i, out) -> {
                putTimestamp(out, row.getLong(i));
                if (zoned) {
                    out.putAscii("+00");
                }
            };
        }
        return forType(type);
    }

    /** The writer for a Spark type, or null when there is none. */
    static FieldWriter forType(DataType type) {
        if (type instanceof LongType) {
            return (row, i, out) -> out.putAscii(Long.toString(row.getLong(i)));
        }
        if (type instanceof IntegerType) {
            return (row, i, out) -> out.putAscii(Integer.toString(row.getInt(i)));
        }
        if (type instanceof ShortType) {
            return (row, i, out) -> out.putAscii(Short.toString(row.getShort(i)));
        }
        if (type instanceof ByteType) {
            return (row, i, out) -> out.putAscii(Byte.toString(row.getByte(i)));
        }
        if (type instanceof BooleanType) {
            return (row, i, out) -> out.put(row.getBoolean(i) ? (byte) 't' : (byte) 'f');
        }
        if (type instanceof DecimalType) {
            DecimalType decimal = (DecimalType) type;
            int precision = decimal.precision();
            int scale = decimal.scale();
            return (row, i, out) -> {
                BigDecimal value = row.getDecimal(i, precision, scale).toJavaBigDecimal();
                out.putAscii(value.toPlainString());
            };
        }
        // Java's shortest round-trip form; Postgres reads its exponent, NaN and Infinity.
        if (type instanceof DoubleType) {
            return (row, i, out) -> out.putAscii(Double.toString(row.getDouble(i)));
        }
        if (type instanceof FloatType) {
            return (row, i, out) -> out.putAscii(Float.toString(row.getFloat(i)));
        }
        if (type instanceof DateType) {
            return (row, i, out) -> putDate(out, row.getInt(i), true);
        }
        // Spark's timestamps are instants, written in UTC with their offset; a column without a
        // time zone ignores the offset, so it holds the UTC wall-clock time, as Spark read it.
        if (type instanceof TimestampType) {
            return (row, i, out) -> {
                putTimestamp(out, row.getLong(i));
                out.putAscii("+00");
            };
        }
        if (type instanceof TimestampNTZType) {
            return (row, i, out) -> putTimestamp(out, row.getLong(i));
        }
        if (type instanceof StringType) {
            return (row, i, out) -> putEscaped(out, row.getUTF8String(i));
        }
        if (type instanceof BinaryType) {
            return (row, i, out) -> putHex(out, row.getBinary(i));
        }
        return null;
    }

    /** yyyy-mm-dd, with " BC" for years before 1 unless `era` is false (a timestamp adds it last). */
    static void putDate(CopyBuffer out, int epochDay, boolean era) {
        LocalDate date = LocalDate.ofEpochDay(epochDay);
        int year = date.getYear();
        out.putDigits(year > 0 ? year : 1 - year, 4);
        out.put((byte) '-');
        out.putDigits(date.getMonthValue(), 2);
        out.put((byte) '-');
        out.putDigits(date.getDayOfMonth(), 2);
        if (era && year <= 0) {
            out.putAscii(" BC");
        }
    }

    /** yyyy-mm-dd hh:mm:ss[.ffffff][ BC] of microseconds since 1970-01-01 00:00. */
    static void putTimestamp(CopyBuffer out, long micros) {
        long seconds = Math.floorDiv(micros, 1_000_000L);
        long fraction = Math.floorMod(micros, 1_000_000L);
        int epochDay = (int) Math.floorDiv(seconds, 86_400L);
        long secondOfDay = Math.floorMod(seconds, 86_400L);
        putDate(out, epochDay, false);
        out.put((byte) ' ');
        out.putDigits(secondOfDay / 3600, 2);
        out.put((byte) ':');
        out.putDigits(secondOfDay / 60 % 60, 2);
        out.put((byte) ':');
        out.putDigits(secondOfDay % 60, 2);
        if (fraction != 0) {
            out.put((byte) '.');
            out.putDigits(fraction, 6);
        }
        if (LocalDate.ofEpochDay(epochDay).getYear() <= 0) {
            out.putAscii(" BC");
        }
    }

    /** The text format's escapes: backslash, newline, carriage return and tab are the only bytes that need one. */
    static void putEscaped(CopyBuffer out, UTF8String value) {
        int size = value.numBytes();
        Object base = value.getBaseObject();
        long offset = value.getBaseOffset();
        boolean plain = true;
        for (int k = 0; k < size && plain; k++) {
            byte b = Platform.getByte(base, offset + k);
            plain = b != '\\' && b != '\n' && b != '\r' && b != '\t';
        }
        if (plain) {
            out.putUtf8(value);
            return;
        }
        for (int k = 0; k < size; k++) {
            byte b = Platform.getByte(base, offset + k);
            switch (b) {
                case '\\' -> { out.put((byte) '\\'); out.put((byte) '\\'); }
                case '\n' -> { out.put((byte) '\\'); out.put((byte) 'n'); }
                case '\r' -> { out.put((byte) '\\'); out.put((byte) 'r'); }
                case '\t' -> { out.put((byte) '\\'); out.put((byte) 't'); }
                default -> out.put(b);
            }
        }
    }

    /** bytea's hex input, \x0a1b..., with its backslash escaped for the text format. */
    static void putHex(CopyBuffer out, byte[] value) {
        out.reserve(3 + value.length * 2);
        out.put((byte) '\\');
        out.put((byte) '\\');
        out.put((byte) 'x');
        for (byte b : value) {
            out.put(HEX[(b >> 4) & 15]);
            out.put(HEX[b & 15]);
        }
    }
}
