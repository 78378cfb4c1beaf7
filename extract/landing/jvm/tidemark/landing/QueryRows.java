package tidemark.landing;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * A query's whole result as one string, for the Python driver: a JSON array of rows, each an array
 * of its values' texts (null for NULL). One py4j call carries thousands of rows, where reading them
 * value by value would cost a call each; py4j hands a string over as it is (a byte array it decodes
 * byte by byte in Python), and Python parses JSON in C.
 */
public final class QueryRows {
    private QueryRows() {
    }

    /**
     * The rows of {@code sql}, at most {@code maxRows} (0: all), its parameters bound as strings:
     * {@code parameters} holds them as a 4-byte length (-1: NULL) then the UTF-8 bytes of each, so
     * that binding them costs no call each either.
     */
    public static String readJson(Connection connection, String sql, byte[] parameters, int maxRows)
            throws SQLException, IOException {
        StringBuilder json = new StringBuilder("[");
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setFetchSize(10000);
            statement.setMaxRows(maxRows);
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(parameters));
            for (int index = 1; in.available() > 0; index++) {
                int length = in.readInt();
                if (length < 0) {
                    statement.setString(index, null);
                } else {
                    byte[] text = new byte[length];
                    in.readFully(text);
                    statement.setString(index, new String(text, StandardCharsets.UTF_8));
                }
            }
            try (ResultSet rows = statement.executeQuery()) {
                int width = rows.getMetaData().getColumnCount();
                while (rows.next()) {
                    json.append(json.length() == 1 ? "[" : ",[");
                    for (int i = 1; i <= width; i++) {
                        if (i > 1) {
                            json.append(',');
                        }
                        Json.append(json, rows.getString(i));
                    }
                    json.append(']');
                }
            }
        }
        return json.append(']').toString();
    }
}
