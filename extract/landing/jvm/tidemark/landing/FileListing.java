package tidemark.landing;

import java.io.BufferedReader;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.compress.CompressionCodec;
import org.apache.hadoop.io.compress.CompressionCodecFactory;

/**
 * A file source's listing and digests through Hadoop's filesystem API (a local path, or any URL whose
 * filesystem is on the class path: s3a, abfss, hdfs), each in one call from Python that returns one
 * string: a py4j call per file would cost more than the listing. Fields and files are separated by NUL,
 * the one character no path holds.
 */
public final class FileListing {
    private static final String SEPARATOR = "\0";

    private FileListing() {}

    /**
     * The files under `location` that `glob` matches: path, size, modification time in ms, for each.
     * Raises FileNotFoundException when the location itself does not exist.
     */
    public static String list(String location, String glob, Configuration conf) throws IOException {
        Path base = new Path(location);
        FileSystem fs = base.getFileSystem(conf);
        if (!fs.exists(base)) {
            throw new FileNotFoundException(location + " does not exist");
        }
        FileStatus[] found = fs.globStatus(new Path(base, glob));
        List<String> lines = new ArrayList<>();
        for (FileStatus status : found == null ? new FileStatus[0] : found) {
            if (status.isFile()) {
                lines.add(line(status));
            }
        }
        return String.join(SEPARATOR, lines);
    }

    /** The same fields for each of `joinedPaths` (NUL-separated) as it is now; size and time -1 for one gone. */
    public static String stat(String joinedPaths, Configuration conf) throws IOException {
        List<String> paths = List.of(joinedPaths.split(SEPARATOR));
        String[] lines = new String[paths.size()];
        for (int i = 0; i < lines.length; i++) {
            Path path = new Path(paths.get(i));
            try {
                lines[i] = line(path.getFileSystem(conf).getFileStatus(path));
            } catch (FileNotFoundException gone) {
                lines[i] = String.join(SEPARATOR, paths.get(i), "-1", "-1");
            }
        }
        return String.join(SEPARATOR, lines);
    }

    /** The SHA-256 of each file's bytes (paths NUL-separated) in hex ("" for a file gone), `threads` at a time. */
    public static String sha256(String joinedPaths, Configuration conf, int threads)
            throws IOException, InterruptedException {
        List<String> paths = List.of(joinedPaths.split(SEPARATOR));
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, threads));
        try {
            List<Future<String>> digests = new ArrayList<>();
            for (String path : paths) {
                digests.add(pool.submit(() -> digest(new Path(path), conf)));
            }
            String[] hex = new String[paths.size()];
            for (int i = 0; i < hex.length; i++) {
                hex[i] = digests.get(i).get();
            }
            return String.join(SEPARATOR, hex);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            throw cause instanceof IOException ? (IOException) cause : new IOException(cause);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * The first line of each file (paths NUL-separated), decompressed as its extension says and decoded
     * with `encoding`: a CSV file's header, read without reading the file.
     */
    public static String firstLines(String joinedPaths, Configuration conf, String encoding) throws IOException {
        CompressionCodecFactory codecs = new CompressionCodecFactory(conf);
        List<String> lines = new ArrayList<>();
        for (String name : joinedPaths.split(SEPARATOR)) {
            Path path = new Path(name);
            CompressionCodec codec = codecs.getCodec(path);
            InputStream raw = path.getFileSystem(conf).open(path);
            try (BufferedReader in = new BufferedReader(new InputStreamReader(
                    codec == null ? raw : codec.createInputStream(raw), Charset.forName(encoding)))) {
                String line = in.readLine();
                lines.add(line == null ? "" : line);
            }
        }
        return String.join(SEPARATOR, lines);
    }

    private static String digest(Path path, Configuration conf) throws IOException, NoSuchAlgorithmException {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        byte[] buffer = new byte[1 << 16];
        try (InputStream in = path.getFileSystem(conf).open(path)) {
            for (int read = in.read(buffer); read >= 0; read = in.read(buffer)) {
                sha.update(buffer, 0, read);
            }
        } catch (FileNotFoundException gone) {
            return ""; // removed since it was listed: the next listing says what became of it
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    private static String line(FileStatus status) {
        return String.join(
                SEPARATOR, status.getPath().toString(), Long.toString(status.getLen()),
                Long.toString(status.getModificationTime()));
    }
}
