package tidemark.landing;

import java.math.BigInteger;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * One turn of a reconcile's key-by-key comparison: both sides' pairs (key text, key place, row hash,
 * then each side's extra columns) are read here, counted per range, and matched key by key; only the
 * figures and the pairs that differ go to the Python driver, a few thousand at a time. At 1% differences a
 * turn holds about 100,000 pairs a side of which a few percent differ: decoding all of them in Python
 * took most of the comparison. A turn of new keys differs whole: given at once, its pairs held tens of
 * megabytes of the driver.
 *
 * <p>A pair belongs to the range of the turn its place falls in, the shallowest first; two pairs of one
 * key match only within one range, as the driver matched them range by range. The source's pieces may
 * be read at once, from several threads.
 */
public final class PairDifferences {
    private static final class Pair {
        final int range;
        final String key;
        final String hash;
        final String[] row;

        Pair(int range, String key, String hash, String[] row) {
            this.range = range;
            this.key = key;
            this.hash = hash;
            this.row = row;
        }
    }

    /** A range's row count and exact sum of row hashes (a sum of longs wraps: the wraps are counted). */
    private static final class Figures {
        long rows;
        long sum;
        long wraps;

        void add(long hash) {
            plus(hash);
            rows++;
        }

        void absorb(Figures other) {
            plus(other.sum);
            wraps += other.wraps;
            rows += other.rows;
        }

        private void plus(long value) {
            long total = sum + value;
            if (((sum ^ total) & (value ^ total)) < 0) {
                wraps += value > 0 ? 1 : -1;
            }
            sum = total;
        }

        String checksum() {
            return BigInteger.valueOf(wraps).shiftLeft(64).add(BigInteger.valueOf(sum)).toString();
        }
    }

    /** Per divisor (shallowest range first): range index to the turn's range number. */
    private final TreeMap<Long, Map<Long, Integer>> byDivisor = new TreeMap<>((a, b) -> Long.compare(b, a));
    private final Figures[] sourceFigures;
    private final Figures[] replicaFigures;
    private final Map<String, Pair> replica = new HashMap<>();
    private final List<Pair> source = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();
    private final List<Pair> replicaOnly = new ArrayList<>();
    private int nextSource;
    private int nextReplicaOnly;

    /** {@code ranges}: the turn's ranges as "divisor:index" separated by commas, numbered from 0. */
    public PairDifferences(String ranges) {
        String[] listed = ranges.isEmpty() ? new String[0] : ranges.split(",");
        for (int number = 0; number < listed.length; number++) {
            String[] parts = listed[number].split(":");
            byDivisor.computeIfAbsent(Long.parseLong(parts[0]), d -> new HashMap<>())
                    .put(Long.parseLong(parts[1]), number);
        }
        sourceFigures = new Figures[listed.length];
        replicaFigures = new Figures[listed.length];
        for (int number = 0; number < listed.length; number++) {
            sourceFigures[number] = new Figures();
            replicaFigures[number] = new Figures();
        }
    }

    /** Reads the pairs of {@code sql} on {@code connection}, as {@code side}'s ("source" or "replica"). */
    public void read(String side, Connection connection, String sql) throws SQLException {
        boolean fromSource = side.equals("source");
        List<Pair> pairs = new ArrayList<>();
        Figures[] figures = fromSource ? new Figures[sourceFigures.length] : replicaFigures;
        try (Statement statement = connection.createStatement()) {
            statement.setFetchSize(10000);
            try (ResultSet rows = statement.executeQuery(sql)) {
                int width = rows.getMetaData().getColumnCount();
                while (rows.next()) {
                    String[] row = new String[width];
                    for (int i = 0; i < width; i++) {
                        row[i] = rows.getString(i + 1);
                    }
                    Pair pair = place(row);
                    if (pair == null) {
                        return;
                    }
                    if (figures[pair.range] == null) {
                        figures[pair.range] = new Figures();
                    }
                    figures[pair.range].add(pair.hash == null ? 0 : Long.parseLong(pair.hash));
                    pairs.add(pair);
                }
            }
        }
        synchronized (this) {
            if (fromSource) {
                for (int number = 0; number < figures.length; number++) {
                    if (figures[number] != null) {
                        sourceFigures[number].absorb(figures[number]);
                    }
                }
                source.addAll(pairs);
            } else {
                for (Pair pair : pairs) {
                    if (replica.putIfAbsent(pair.key, pair) != null) {
                        problems.add(problem("replica", pair));
                    }
                }
            }
        }
    }

    private Pair place(String[] row) {
        long place = row[1] == null ? 0 : Long.parseLong(row[1]);
        for (Map.Entry<Long, Map<Long, Integer>> ranges : byDivisor.entrySet()) {
            Integer range = ranges.getValue().get(place / ranges.getKey());
            if (range != null) {
                return new Pair(range, String.valueOf(row[0]), row[2], row);
            }
        }
        synchronized (this) {
            problems.add("[\"outside\",0,\"" + place + "\"]");
        }
        return null;
    }

    private static String problem(String side, Pair pair) {
        StringBuilder json = new StringBuilder("[\"").append(side).append("\",").append(pair.range).append(',');
        Json.append(json, pair.key);
        return json.append(']').toString();
    }

    /**
     * The turn's figures as JSON, once every side is read: {@code problems} (["outside", 0, place] for a
     * pair in no range, [side, range, key] for a key held twice) and each side's figures per range
     * ([range, rows, checksum], ranges with rows only). The pairs that differ then come from
     * {@link #differences}.
     */
    public synchronized String figures() {
        Map<String, Integer> sourceKeys = new HashMap<>(source.size() * 2);
        for (Pair pair : source) {
            if (sourceKeys.putIfAbsent(pair.key, pair.range) != null) {
                problems.add(problem("source", pair));
            }
        }
        source.sort(Comparator.comparingInt(pair -> pair.range));
        for (Pair pair : replica.values()) {
            Integer range = sourceKeys.get(pair.key);
            if (range == null || range != pair.range) {
                replicaOnly.add(pair);
            }
        }
        replicaOnly.sort(
                Comparator.<Pair>comparingInt(pair -> pair.range)
                        .thenComparing(pair -> pair.key, PairDifferences::byCodePoint));
        StringBuilder json = new StringBuilder("{\"problems\":[").append(String.join(",", problems));
        json.append("],\"source\":");
        appendFigures(json, sourceFigures);
        json.append(",\"replica\":");
        appendFigures(json, replicaFigures);
        return json.append('}').toString();
    }

    /**
     * The next at most {@code most} pairs that differ, as JSON, in the ranges' order: {@code differ}
     * (each source pair the replica does not hold as it is: [range, 1 when the replica holds the key,
     * then the pair]), then {@code replicaOnly} ([range, then the pair] for each replica key the source
     * does not hold, by key). Both lists are empty once every pair was given: the driver holds a few
     * thousand at a time however many differ.
     */
    public synchronized String differences(int most) {
        StringBuilder json = new StringBuilder("{\"differ\":[");
        int given = 0;
        boolean first = true;
        for (; nextSource < source.size() && given < most; nextSource++) {
            Pair pair = source.get(nextSource);
            Pair other = replica.get(pair.key);
            boolean held = other != null && other.range == pair.range;
            if (held && Objects.equals(other.hash, pair.hash)) {
                continue;
            }
            json.append(first ? "[" : ",[").append(pair.range).append(held ? ",1" : ",0");
            appendRow(json, pair.row);
            first = false;
            given++;
        }
        json.append("],\"replicaOnly\":[");
        first = true;
        for (; nextReplicaOnly < replicaOnly.size() && given < most; nextReplicaOnly++) {
            Pair pair = replicaOnly.get(nextReplicaOnly);
            json.append(first ? "[" : ",[").append(pair.range);
            appendRow(json, pair.row);
            first = false;
            given++;
        }
        return json.append("]}").toString();
    }

    /** Python's order of strings: by code point (String.compareTo orders UTF-16 units). */
    private static int byCodePoint(String left, String right) {
        return Arrays.compare(left.codePoints().toArray(), right.codePoints().toArray());
    }

    private static void appendFigures(StringBuilder json, Figures[] figures) {
        json.append('[');
        boolean first = true;
        for (int number = 0; number < figures.length; number++) {
            if (figures[number].rows > 0) {
                json.append(first ? "[" : ",[").append(number).append(',').append(figures[number].rows)
                        .append(",\"").append(figures[number].checksum()).append("\"]");
                first = false;
            }
        }
        json.append(']');
    }

    private static void appendRow(StringBuilder json, String[] row) {
        for (String value : row) {
            json.append(',');
            Json.append(json, value);
        }
        json.append(']');
    }
}
