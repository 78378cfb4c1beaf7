package tidemark.landing;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The connections that landings from the driver's JVM hand from one batch to the next, for the length
 * of a pass: on a small batch, opening a connection to each side costs more than the read and the COPY
 * (a server process, a login, cold catalog caches). A connection is given back only after a landing
 * that went through, its transaction ended; one that failed is closed. The pass closes them all at its
 * end ({@link #closeAll}): a loop may sleep longer than a server keeps an idle connection.
 */
public final class LandingConnections {
    private static final Map<String, Deque<Connection>> IDLE = new HashMap<>();

    private LandingConnections() {}

    /** Opens a connection when none is idle. */
    interface Opener {
        Connection open() throws SQLException;
    }

    /** The key of connections made alike: the URL and every property, in order. */
    static String key(String url, Properties properties) {
        Map<String, String> sorted = new TreeMap<>();
        for (String name : properties.stringPropertyNames()) {
            sorted.put(name, properties.getProperty(name));
        }
        return url + "\u0000" + sorted;
    }

    /** What is done with a connection. */
    interface Use<T> {
        T apply(Connection connection) throws SQLException;
    }

    /**
     * {@code use} applied to an idle connection of {@code key}'s, or to a new one; given back when it
     * returns, closed when it fails.
     */
    static <T> T with(String key, Opener opener, Use<T> use) throws SQLException {
        Connection connection = take(key, opener);
        boolean done = false;
        try {
            T result = use.apply(connection);
            done = true;
            return result;
        } finally {
            if (done) {
                giveBack(key, connection);
            } else {
                close(connection);
            }
        }
    }

    private static Connection take(String key, Opener opener) throws SQLException {
        synchronized (IDLE) {
            Deque<Connection> idle = IDLE.get(key);
            Connection found = idle == null ? null : idle.pollFirst();
            if (found != null) {
                return found;
            }
        }
        return opener.open();
    }

    /**
     * Back to the idle ones, once what it read or wrote is over: a transaction still open (a read that
     * fetched by pages) is rolled back, so that no snapshot or lock outlives the landing. A connection
     * that cannot be is closed.
     */
    private static void giveBack(String key, Connection connection) {
        try {
            if (!connection.getAutoCommit()) {
                connection.rollback();
            }
        } catch (SQLException broken) {
            close(connection);
            return;
        }
        synchronized (IDLE) {
            IDLE.computeIfAbsent(key, k -> new ArrayDeque<>()).addFirst(connection);
        }
    }

    private static void close(Connection connection) {
        try {
            connection.close();
        } catch (SQLException ignored) {
            // already broken: nothing is left to release
        }
    }

    /** Closes every idle connection; returns how many. */
    public static int closeAll() {
        List<Connection> all = new ArrayList<>();
        synchronized (IDLE) {
            IDLE.values().forEach(all::addAll);
            IDLE.clear();
        }
        all.forEach(LandingConnections::close);
        return all.size();
    }
}
