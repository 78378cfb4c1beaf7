package tidemark.landing;

import java.sql.SQLException;

import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * A landing that failed, said in one line: what failed and Postgres' own words, including
 * where in the COPY (the row, the column and the value Postgres refused). The extract finds this
 * line in whatever Spark or py4j wrap around it and shows it instead of a Java stack trace.
 */
public final class LandingFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private LandingFailure(String what, Throwable cause) {
        super(what + ": " + describe(cause), cause);
    }

    /** The failure of `what` caused by `cause`; `cause` itself when it already is one. */
    static LandingFailure of(String what, Exception cause) {
        return cause instanceof LandingFailure ? (LandingFailure) cause : new LandingFailure(what, cause);
    }

    /** The cause in one line: a server error with its context, else the exception's first line. */
    static String describe(Throwable cause) {
        if (cause instanceof PSQLException) {
            ServerErrorMessage server = ((PSQLException) cause).getServerErrorMessage();
            if (server != null && server.getMessage() != null) {
                String where = server.getWhere();
                return server.getMessage() + (where == null ? "" : " (" + firstLine(where) + ")");
            }
        }
        if (cause instanceof SQLException && cause.getCause() != null && cause.getMessage() == null) {
            return describe(cause.getCause());
        }
        String message = cause.getMessage();
        return firstLine(message == null ? cause.getClass().getSimpleName() : message);
    }

    private static String firstLine(String text) {
        int end = text.indexOf('\n');
        return (end < 0 ? text : text.substring(0, end)).trim();
    }
}
