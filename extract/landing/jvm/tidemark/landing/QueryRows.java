package tidemark.landing;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Base64;

/**
 * A query's whole result as one byte array, for the Python driver: each value as its text, a
 * 4-byte length then its UTF-8 bytes, -1 for NULL; rows one after another. One py4j call
 * carries thousands of rows, where reading them value by value would cost a call each.
 */
public final class QueryRows {
    private QueryRows() {
    }

    /**
     * {@link #read}'s bytes as Base64 text: py4j hands a string over as it is, where it decodes a byte
     * array byte by byte in Python (seconds for the megabytes of a reconcile's pairs).
     */
    public static String readBase64(Connection connection, String sql, byte[] parameters, int maxRows)
            throws SQLException, IOException {
        return Base64.getEncoder().encodeToString(read(connection, sql, parameters, maxRows));
    }

    /**
     * The rows of {@code sql}, at most {@code maxRows} (0: all), its parameters bound as strings:
     * {@code parameters} holds them in the format of the result (lengths then UTF-8 bytes, no width),
     * so that binding them costs no call each either.
     */
    public static byte[] read(Connection connection, String sql, byte[] parameters, int maxRows)
            throws SQLException, IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
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
                out.writeInt(width);
                while (rows.next()) {
                    for (int i = 1; i <= width; i++) {
                        String value = rows.getString(i);
                        if (value == null) {
                            out.writeInt(-1);
                        } else {
                            byte[] text = value.getBytes(StandardCharsets.UTF_8);
                            out.writeInt(text.length);
                            out.write(text);
                        }
                    }
                }
            }
        }
        out.flush();
        return bytes.toByteArray();
    }
}
