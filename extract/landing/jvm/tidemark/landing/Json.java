package tidemark.landing;

/** Values written as JSON strings, for the Python driver, which parses JSON in C. */
final class Json {
    private Json() {
    }

    /** {@code value} as a JSON string ({@code null} for NULL). */
    static void append(StringBuilder json, String value) {
        if (value == null) {
            json.append("null");
            return;
        }
        json.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"' || c == '\\') {
                json.append('\\').append(c);
            } else if (c < 0x20 || Character.isSurrogate(c) && !validPair(value, i)) {
                // JSON's escapes for control characters; a lone surrogate (no character) as U+FFFD.
                json.append(String.format("\\u%04x", Character.isSurrogate(c) ? 0xFFFD : (int) c));
            } else {
                json.append(c);
            }
        }
        json.append('"');
    }

    private static boolean validPair(String value, int i) {
        char c = value.charAt(i);
        if (Character.isHighSurrogate(c)) {
            return i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1));
        }
        return i > 0 && Character.isHighSurrogate(value.charAt(i - 1));
    }
}
