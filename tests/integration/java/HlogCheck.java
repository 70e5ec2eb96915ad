// Decodes an HdrHistogram interval log with HdrHistogram's own Java
// implementation (Debian's libhdrhistogram-java) and prints one line per
// interval, for tests/integration/test_report.py:
//
//   interval START_S LENGTH_S COUNT P50 P99 MAX
//
// START_S is relative to the log's StartTime, values are in the log's unit
// (pacer: ns) as HdrHistogram reports them (highest equivalent values).
// Then a last line: "start_time START_TIME_S intervals N total COUNT".
// Run with a single-file source launch:
//   java -cp /usr/share/java/hdrhistogram.jar tests/integration/java/HlogCheck.java FILE
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;

public class HlogCheck {
    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: HlogCheck FILE.hlog");
            System.exit(2);
        }
        HistogramLogReader reader = new HistogramLogReader(args[0]);
        long intervals = 0, total = 0;
        EncodableHistogram eh;
        while ((eh = reader.nextIntervalHistogram()) != null) {
            if (!(eh instanceof Histogram)) {
                System.err.println("interval " + intervals + " is not an integer Histogram");
                System.exit(1);
            }
            Histogram h = (Histogram) eh;
            double start = h.getStartTimeStamp() / 1000.0 - reader.getStartTimeSec();
            double len = (h.getEndTimeStamp() - h.getStartTimeStamp()) / 1000.0;
            long n = h.getTotalCount();
            System.out.printf(java.util.Locale.ROOT, "interval %.3f %.3f %d %d %d %d%n", start, len, n,
                    n > 0 ? h.getValueAtPercentile(50.0) : 0,
                    n > 0 ? h.getValueAtPercentile(99.0) : 0,
                    n > 0 ? h.getMaxValue() : 0);
            intervals++;
            total += n;
        }
        System.out.printf(java.util.Locale.ROOT, "start_time %.3f intervals %d total %d%n",
                reader.getStartTimeSec(), intervals, total);
    }
}
