package tidemark.landing;

import java.io.Serializable;

import org.apache.spark.sql.catalyst.InternalRow;

/** Writes one non-null column value of a row in a COPY format. */
@FunctionalInterface
interface FieldWriter extends Serializable {
    void write(InternalRow row, int ordinal, CopyBuffer out);
}
