package tidemark.landing;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;

import org.apache.spark.executor.InputMetrics;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.datasources.jdbc.JDBCOptions;
import org.apache.spark.sql.execution.datasources.jdbc.JDBCRDD$;
import org.apache.spark.sql.execution.datasources.jdbc.JdbcUtils$;
import org.apache.spark.sql.jdbc.JdbcDialect;
import org.apache.spark.sql.jdbc.JdbcDialects;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

import scala.jdk.javaapi.CollectionConverters;

/**
 * Lands one partition from the driver's JVM, without a Spark job: for a batch that is one
 * partition, Spark's scheduler would run a single task, and starting it costs more than the
 * work. The rows take Spark's own path from JDBC to rows (the relation's schema as
 * {@code spark.read.jdbc} resolves it, the same dialect, the same value conversions) and are
 * written by the same {@link PartitionLander} as a Spark task's.
 */
public final class DriverLanding {
    private DriverLanding() {}

    /**
     * Lands the rows of {@code relation} (a parenthesised query with an alias) that match
     * {@code filter}: its first {@code targetTypes.length} columns, the rest being only for the filter.
     *
     * @return {rows landed, 1 if the partition had landed before (nothing written), else 0}
     */
    public static long[] land(
            String sourceUrl,
            Properties sourceProperties,
            String relation,
            String filter,
            String[] targetTypes,
            String targetUrl,
            Properties targetProperties,
            String copyStatement,
            String markStatement,
            long runId,
            boolean tagged,
            int partitionNumber) {
        try {
            Map<String, String> settings = new java.util.HashMap<>();
            for (String name : sourceProperties.stringPropertyNames()) {
                settings.put(name, sourceProperties.getProperty(name));
            }
            settings.putIfAbsent("fetchsize", "10000"); // a retry asks for a smaller page
            JDBCOptions options = new JDBCOptions(sourceUrl, relation, scala.collection.immutable.Map$.MODULE$.from(
                    CollectionConverters.asScala(settings)));
            JdbcDialect dialect = JdbcDialects.get(sourceUrl);
            // One connection resolves the relation's schema and reads its rows; both sides' connections go on
            // to the next batch (LandingConnections): a connection costs more than either query on a small one.
            String sourceKey = LandingConnections.key(sourceUrl, sourceProperties);
            return LandingConnections.with(sourceKey, () -> dialect.createConnectionFactory(options).apply(-1), source -> {
                JDBCRDD$ resolver = JDBCRDD$.MODULE$;
                StructField[] fields = Arrays.copyOf(
                        resolver.resolveTable(options, source, resolver.resolveTable$default$3(),
                                resolver.resolveTable$default$4()).fields(),
                        targetTypes.length);
                String columns = Arrays.stream(fields)
                        .map(field -> dialect.quoteIdentifier(field.name()))
                        .collect(Collectors.joining(", "));
                String query = "SELECT " + columns + " FROM " + relation + " WHERE " + filter;
                PartitionLander lander = CopyLanding.lander(
                        fields, targetTypes, targetUrl, targetProperties, copyStatement, markStatement, runId,
                        tagged, new int[] {partitionNumber});
                dialect.beforeFetch(source, options);
                try (PreparedStatement statement =
                        source.prepareStatement(query, ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY)) {
                    statement.setFetchSize(options.fetchSize());
                    try (ResultSet result = statement.executeQuery()) {
                        scala.collection.Iterator<InternalRow> rows = JdbcUtils$.MODULE$.resultSetToSparkInternalRows(
                                result, dialect, new StructType(fields), new InputMetrics(), scala.Option.empty());
                        Iterator<InternalRow> javaRows = CollectionConverters.asJava(rows);
                        String targetKey = LandingConnections.key(targetUrl, targetProperties);
                        long[] landed = LandingConnections.with(
                                targetKey, lander::connect, target -> lander.landOn(target, partitionNumber, javaRows));
                        return new long[] {landed[1], landed[2]};
                    }
                }
            });
        } catch (SQLException | RuntimeException e) {
            throw LandingFailure.of("partition " + partitionNumber, e);
        }
    }
}
