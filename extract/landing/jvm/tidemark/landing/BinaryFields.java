package tidemark.landing;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Locale;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/**
 * COPY's binary format: each value as its column type's binary form, which Postgres takes
 * without parsing text. Only for pairs of Spark type and Postgres type whose conversion is
 * exact; Postgres still applies the column's length, precision and scale, as it does to text.
 */
final class BinaryFields {
    /** Postgres counts days and microseconds from 2000-01-01, Spark from 1970-01-01. */
    private static final int EPOCH_DAYS = 10_957;
    private static final long EPOCH_MICROS = EPOCH_DAYS * 86_400_000_000L;

    private BinaryFields() {}

    /** The writer for a Spark type landing in a Postgres type, or null when there is none. */
    static FieldWriter forColumn(DataType type, String targetType) {
        String target = targetType.toLowerCase(Locale.ROOT);
        int paren = target.indexOf('(');
        String base = (paren < 0 ? target : target.substring(0, paren)).trim();
        switch (base) {
            case "bigint":
                return integral(type, 8);
            case "integer":
                return integral(type, 4);
            case "smallint":
                return integral(type, 2);
            case "boolean":
                return type instanceof BooleanType ? (row, i, out) -> {
                    out.putInt(1);
                    out.put(row.getBoolean(i) ? (byte) 1 : (byte) 0);
                } : null;
            case "numeric":
                return type instanceof DecimalType decimal ? numeric(decimal) : null;
            case "double precision":
                return type instanceof DoubleType ? (row, i, out) -> {
                    out.putInt(8);
                    out.putLong(Double.doubleToRawLongBits(row.getDouble(i)));
                } : null;
            case "real":
                return type instanceof FloatType ? (row, i, out) -> {
                    out.putInt(4);
                    out.putInt(Float.floatToRawIntBits(row.getFloat(i)));
                } : null;
            case "date":
                // An integer is a day number: how the source dialects read a calendar date.
                return type instanceof DateType || type instanceof IntegerType ? (row, i, out) -> {
                    out.putInt(4);
                    out.putInt(row.getInt(i) - EPOCH_DAYS);
                } : null;
            case "timestamp":
            case "timestamptz":
                // An instant fits either column (as UTC wall-clock time without a time zone, as the
                // text format does); a local date-time only fits a column without a time zone. A bigint
                // is microseconds since 1970-01-01 00:00 UTC: how the source dialects read a date-time.
                boolean fits = type instanceof TimestampType || type instanceof LongType
                        || (type instanceof TimestampNTZType && base.equals("timestamp"));
                return fits ? (row, i, out) -> {
                    out.putInt(8);
                    out.putLong(row.getLong(i) - EPOCH_MICROS);
                } : null;
            case "text":
            case "varchar":
            case "character varying":
            case "char":
            case "character":
            case "bpchar":
            case "json":
                return type instanceof StringType ? BinaryFields::utf8 : null;
            case "jsonb":
                return type instanceof StringType ? BinaryFields::jsonb : null;
            case "bytea":
                return type instanceof BinaryType ? (row, i, out) -> {
                    byte[] value = row.getBinary(i);
                    out.putInt(value.length);
                    out.putBytes(value);
                } : null;
            default:
                return null;
        }
    }

    private static void utf8(InternalRow row, int i, CopyBuffer out) {
        out.putInt(row.getUTF8String(i).numBytes());
        out.putUtf8(row.getUTF8String(i));
    }

    /** jsonb's binary form is a version byte, 1, then the JSON text. */
    private static void jsonb(InternalRow row, int i, CopyBuffer out) {
        out.putInt(1 + row.getUTF8String(i).numBytes());
        out.put((byte) 1);
        out.putUtf8(row.getUTF8String(i));
    }

    private static long integral(InternalRow row, int i, DataType type) {
        if (type instanceof LongType) {
            return row.getLong(i);
        }
        if (type instanceof IntegerType) {
            return row.getInt(i);
        }
        if (type instanceof ShortType) {
            return row.getShort(i);
        }
        return row.getByte(i);
    }

    private static int width(DataType type) {
        if (type instanceof LongType) {
            return 8;
        }
        if (type instanceof IntegerType) {
            return 4;
        }
        if (type instanceof ShortType) {
            return 2;
        }
        return type instanceof ByteType ? 1 : 0;
    }

    /** Integers into an integer column at least as wide, or into smallint from int (SQL Server's tinyint). */
    private static FieldWriter integral(DataType type, int bytes) {
        int from = width(type);
        boolean narrowing = bytes == 2 && from == 4;
        if (from == 0 || (from > bytes && !narrowing)) {
            return null;
        }
        return (row, i, out) -> {
            long value = integral(row, i, type);
            out.putInt(bytes);
            switch (bytes) {
                case 8 -> out.putLong(value);
                case 4 -> out.putInt((int) value);
                default -> {
                    if (value < Short.MIN_VALUE || value > Short.MAX_VALUE) {
                        throw new ArithmeticException("value " + value + " is out of range for type smallint");
                    }
                    out.putShort((int) value);
                }
            }
        };
    }

    private static FieldWriter numeric(DecimalType type) {
        int precision = type.precision();
        int scale = type.scale();
        if (scale < 0) {
            return null;
        }
        if (precision <= Decimal.MAX_LONG_DIGITS() && scale <= 16) {
            // Spark keeps these as a long of unscaled digits: no BigDecimal per value. (The padded
            // fraction of a larger scale could overflow a long.)
            return (row, i, out) -> putNumeric(out, row.getDecimal(i, precision, scale).toUnscaledLong(), scale);
        }
        return (row, i, out) -> {
            BigDecimal value = row.getDecimal(i, precision, scale).toJavaBigDecimal();
            putNumeric(out, value.unscaledValue(), value.scale());
        };
    }

    private static final long[] POWERS_OF_TEN = new long[19];

    static {
        POWERS_OF_TEN[0] = 1;
        for (int k = 1; k < POWERS_OF_TEN.length; k++) {
            POWERS_OF_TEN[k] = POWERS_OF_TEN[k - 1] * 10;
        }
    }

    /** As {@link #putNumeric(CopyBuffer, BigInteger, int)}, for at most 18 digits. */
    static void putNumeric(CopyBuffer out, long unscaled, int scale) {
        if (unscaled == Long.MIN_VALUE) {
            putNumeric(out, BigInteger.valueOf(unscaled), scale);
            return;
        }
        long magnitude = Math.abs(unscaled);
        // The fraction padded to whole groups of four digits, and the integer part.
        int fractionGroups = (scale + 3) / 4;
        long integer = magnitude / POWERS_OF_TEN[scale];
        long fraction = (magnitude % POWERS_OF_TEN[scale]) * POWERS_OF_TEN[fractionGroups * 4 - scale];
        int[] groups = new int[10];
        int count = 0;
        for (int g = 0; g < fractionGroups; g++) {
            groups[count++] = (int) (fraction % 10_000);
            fraction /= 10_000;
        }
        int integerGroups = 0;
        while (integer != 0) {
            groups[count++] = (int) (integer % 10_000);
            integer /= 10_000;
            integerGroups++;
        }
        // groups holds the base-10000 digits from the least significant; drop zeros at both ends.
        int weight = integerGroups - 1;
        int high = count - 1;
        while (high >= 0 && groups[high] == 0) {
            high--;
            weight--;
        }
        int low = 0;
        while (low <= high && groups[low] == 0) {
            low++;
        }
        int digits = high - low + 1;
        out.putInt(8 + 2 * digits);
        out.putShort(digits);
        out.putShort(digits == 0 ? 0 : weight);
        out.putShort(unscaled < 0 && digits > 0 ? 0x4000 : 0);
        out.putShort(scale);
        for (int g = high; g >= low; g--) {
            out.putShort(groups[g]);
        }
    }

    /**
     * Postgres' numeric: base-10000 digits around the decimal point, then the weight of the
     * first digit, the sign and the display scale.
     */
    static void putNumeric(CopyBuffer out, BigInteger unscaled, int scale) {
        String digits = unscaled.abs().toString();
        // Pad both parts to whole groups of four decimal digits.
        int intLength = Math.max(0, digits.length() - scale);
        int intPad = (4 - intLength % 4) % 4;
        int fracPad = (4 - scale % 4) % 4;
        StringBuilder padded = new StringBuilder(intPad + digits.length() + fracPad + scale);
        padded.append("0".repeat(intPad));
        if (digits.length() < scale) {
            padded.append("0".repeat(scale - digits.length()));
        }
        padded.append(digits).append("0".repeat(fracPad));
        int groups = padded.length() / 4;
        int[] base10000 = new int[groups];
        for (int g = 0; g < groups; g++) {
            base10000[g] = Integer.parseInt(padded, g * 4, g * 4 + 4, 10);
        }
        int weight = (intLength + intPad) / 4 - 1;
        int first = 0;
        while (first < groups && base10000[first] == 0) {
            first++;
            weight--;
        }
        int last = groups;
        while (last > first && base10000[last - 1] == 0) {
            last--;
        }
        int count = last - first;
        boolean negative = unscaled.signum() < 0;
        out.putInt(8 + 2 * count);
        out.putShort(count);
        out.putShort(count == 0 ? 0 : weight);
        out.putShort(negative && count > 0 ? 0x4000 : 0);
        out.putShort(scale);
        for (int g = first; g < last; g++) {
            out.putShort(base10000[g]);
        }
    }
}
