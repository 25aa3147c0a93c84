package io.wheelraft.example;

import org.knowm.xchart.AnnotationLine;
import org.knowm.xchart.AnnotationText;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import javax.imageio.ImageIO;

/**
 * Draws a chaos run's charts as PNG: the timeline (acknowledged increments per 100 ms above, latency
 * percentiles per 100 ms below, on one time axis, with every fault, recovery and leader change
 * marked) and the re-election histogram (whole-number counts, the election timeout marked).
 * Stateless and thread-safe.
 */
final class ChaosCharts {

    static final Color FAULT = new Color(0xD6, 0x27, 0x28);
    static final Color RECOVERY = new Color(0x2C, 0xA0, 0x2C);
    static final Color LEADER = new Color(0x1F, 0x77, 0xB4);
    private static final int WIDTH = 1200;

    private ChaosCharts() {
    }

    /**
     * Loads Java2D and the PNG writer now: they register JVM shutdown hooks when first used, which
     * is refused while the JVM shuts down, so a partial report written from a shutdown hook
     * (Ctrl-C) could not draw its charts otherwise.
     */
    static void warmUp() {
        try {
            BufferedImage img = new BufferedImage(4, 4, BufferedImage.TYPE_INT_RGB);
            Graphics2D g = img.createGraphics();
            g.drawString("x", 0, 3);
            g.dispose();
            ImageIO.write(img, "png", new ByteArrayOutputStream());
            BitmapEncoder.getBitmapBytes(new XYChartBuilder().width(40).height(30).build(), BitmapEncoder.BitmapFormat.PNG);
        } catch (IOException | RuntimeException e) {
            // Only a head start; drawing later reports its own error.
        }
    }

    /** The timeline: two panels stacked in one image. */
    static byte[] timelinePng(String title, List<ChaosRecorder.Bucket> buckets, List<ChaosRecorder.Event> events) throws IOException {
        double end = Math.max(1, buckets.size() * ChaosRecorder.BUCKET_NANOS / 1e9);
        for (ChaosRecorder.Event e : events) {
            end = Math.max(end, e.seconds());
        }
        List<Double> x = new ArrayList<>();
        List<Double> acked = new ArrayList<>();
        List<Double> p50 = new ArrayList<>();
        List<Double> p99 = new ArrayList<>();
        List<Double> max = new ArrayList<>();
        for (ChaosRecorder.Bucket b : buckets) {
            x.add(b.startSeconds() + 0.05);
            acked.add((double) b.acked());
            // A bucket with no acknowledgement has no latency: drawn as a gap (log axis, so not 0).
            p50.add(Double.isNaN(b.p50Ms()) ? null : Math.max(0.01, b.p50Ms()));
            p99.add(Double.isNaN(b.p99Ms()) ? null : Math.max(0.01, b.p99Ms()));
            max.add(Double.isNaN(b.maxMs()) ? null : Math.max(0.01, b.maxMs()));
        }
        if (x.isEmpty()) {
            x.add(0.0);
            acked.add(0.0);
            p50.add(null);
            p99.add(null);
            max.add(null);
        }
        double topAcked = Math.max(1, acked.stream().mapToDouble(Double::doubleValue).max().orElse(1)) * 1.6;
        XYChart ops = new XYChartBuilder().width(WIDTH).height(330).title(title)
                .xAxisTitle("").yAxisTitle("acknowledged per 100 ms").build();
        style(ops, 0, end, 0, topAcked);
        XYSeries s = ops.addSeries("acknowledged increments per 100 ms", x, acked);
        s.setMarker(SeriesMarkers.NONE);
        s.setLineColor(new Color(0x44, 0x44, 0x44));
        markEvents(ops, events, 0, topAcked, true, end);

        double topLatency = Math.max(10, max.stream().filter(v -> v != null).mapToDouble(Double::doubleValue).max().orElse(10)) * 3;
        XYChart lat = new XYChartBuilder().width(WIDTH).height(300).title("")
                .xAxisTitle("seconds since the run started").yAxisTitle("latency, ms (log)").build();
        style(lat, 0, end, 0.1, topLatency);
        lat.getStyler().setYAxisLogarithmic(true);
        lat.getStyler().setYAxisMin(0.1);
        lat.getStyler().setYAxisDecimalPattern("#,##0.#");
        addLatency(lat, "p50", x, p50, new Color(0x99, 0x99, 0x99));
        addLatency(lat, "p99", x, p99, new Color(0xFF, 0x7F, 0x0E));
        addLatency(lat, "max", x, max, new Color(0x94, 0x67, 0xBD));
        markEvents(lat, events, 0.1, topLatency, false, end);

        BufferedImage top = BitmapEncoder.getBufferedImage(ops);
        BufferedImage bottom = BitmapEncoder.getBufferedImage(lat);
        // The panels' y-axis labels differ in width, so their plot areas start at different x:
        // shift one (on a canvas that much wider) so both time axes line up.
        int shift = plotLeft(top, ops) - plotLeft(bottom, lat);
        BufferedImage both = new BufferedImage(WIDTH + Math.abs(shift), top.getHeight() + bottom.getHeight(), BufferedImage.TYPE_INT_RGB);
        Graphics2D g = both.createGraphics();
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, both.getWidth(), both.getHeight());
        g.drawImage(top, Math.max(0, -shift), 0, null);
        g.drawImage(bottom, Math.max(0, shift), top.getHeight(), null);
        g.dispose();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ImageIO.write(both, "png", out);
        return out.toByteArray();
    }

    /** The x of the plot area's left border, found on the image's middle row (0 if not found). */
    private static int plotLeft(BufferedImage img, XYChart chart) {
        int border = chart.getStyler().getPlotBorderColor().getRGB() & 0xFFFFFF;
        int y = img.getHeight() / 2;
        for (int x = 0; x < img.getWidth() / 3; x++) {
            if ((img.getRGB(x, y) & 0xFFFFFF) == border) {
                return x;
            }
        }
        return 0;
    }

    private static void addLatency(XYChart chart, String name, List<Double> x, List<Double> y, Color color) {
        XYSeries s = chart.addSeries(name + " latency", x, y);
        s.setMarker(SeriesMarkers.NONE);
        s.setLineColor(color);
    }

    private static void style(XYChart chart, double xMax, double end, double yMin, double yMax) {
        Styler.LegendPosition pos = Styler.LegendPosition.OutsideS;
        chart.getStyler().setLegendPosition(pos);
        chart.getStyler().setLegendLayout(Styler.LegendLayout.Horizontal);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setPlotGridLinesColor(new Color(0xE5, 0xE5, 0xE5));
        chart.getStyler().setXAxisMin(xMax);
        chart.getStyler().setXAxisMax(Math.ceil(end));
        chart.getStyler().setYAxisMin(yMin);
        chart.getStyler().setYAxisMax(yMax);
        chart.getStyler().setAxisTickLabelsFont(chart.getStyler().getAxisTickLabelsFont().deriveFont(11f));
        chart.getStyler().setAnnotationTextFontColor(Color.DARK_GRAY);
        chart.getStyler().setAnnotationTextFont(chart.getStyler().getAxisTickLabelsFont().deriveFont(10f));
    }

    /**
     * A vertical line per event, in its kind's colour; with {@code labels}, its name near the top,
     * on the highest row where it does not run into another label.
     */
    private static void markEvents(XYChart chart, List<ChaosRecorder.Event> events, double yMin, double yMax, boolean labels, double end) {
        Map<ChaosRecorder.EventKind, Color> colors = Map.of(ChaosRecorder.EventKind.FAULT, FAULT, ChaosRecorder.EventKind.RECOVERY,
                RECOVERY, ChaosRecorder.EventKind.LEADER, LEADER);
        Map<ChaosRecorder.EventKind, String> legend = Map.of(ChaosRecorder.EventKind.FAULT, "fault", ChaosRecorder.EventKind.RECOVERY,
                "start / restart / caught up", ChaosRecorder.EventKind.LEADER, "new leader");
        boolean log = chart.getStyler().isYAxisLogarithmic();
        int i = 0;
        List<ChaosRecorder.EventKind> shown = new ArrayList<>();
        int rows = 6;
        double[] rowEnds = new double[rows];
        java.util.Arrays.fill(rowEnds, Double.NEGATIVE_INFINITY);
        double secondsPerChar = end / 1100 * 6.2;
        for (ChaosRecorder.Event e : events) {
            XYSeries line = chart.addSeries("event " + (i++), new double[] {e.seconds(), e.seconds()}, new double[] {yMin, yMax});
            line.setMarker(SeriesMarkers.NONE);
            line.setLineColor(colors.get(e.kind()));
            line.setLineWidth(1.2f);
            if (shown.contains(e.kind())) {
                line.setShowInLegend(false);
            } else {
                line.setLabel(legend.get(e.kind()));
                shown.add(e.kind());
            }
            if (labels) {
                double half = e.label().length() * secondsPerChar / 2;
                int row = 0;
                while (row < rows - 1 && rowEnds[row] > e.seconds() - half) {
                    row++;
                }
                rowEnds[row] = e.seconds() + half;
                double frac = 0.96 - 0.065 * row;
                double y = log ? Math.exp(Math.log(yMin) + frac * (Math.log(yMax) - Math.log(yMin))) : yMin + frac * (yMax - yMin);
                chart.addAnnotation(new AnnotationText(e.label(), e.seconds(), y, false));
            }
        }
    }

    /**
     * Histogram of fault → new leader and fault → first acknowledged write over the rounds, as
     * grouped bars in bins of equal width; counts are whole numbers; the election timeout is a
     * vertical line.
     */
    static byte[] histogramPng(String title, List<Double> election, List<Double> firstAck, int electionTimeoutMs) throws IOException {
        double maxValue = 0;
        for (double v : election) {
            maxValue = Math.max(maxValue, v);
        }
        for (double v : firstAck) {
            maxValue = Math.max(maxValue, v);
        }
        double span = Math.max(maxValue, electionTimeoutMs) * 1.1;
        double width = niceWidth(span / 40);
        int bins = (int) Math.ceil(span / width);
        int[] a = counts(election, width, bins);
        int[] b = counts(firstAck, width, bins);
        int top = 1;
        for (int i = 0; i < bins; i++) {
            top = Math.max(top, Math.max(a[i], b[i]));
        }
        XYChart chart = new XYChartBuilder().width(WIDTH).height(480).title(title)
                .xAxisTitle(String.format(Locale.ROOT, "milliseconds after the fault (bins of %.0f ms)", width)).yAxisTitle("rounds").build();
        style(chart, 0, bins * width, 0, top + 1);
        chart.getStyler().setXAxisMax(bins * width);
        chart.getStyler().setDefaultSeriesRenderStyle(org.knowm.xchart.XYSeries.XYSeriesRenderStyle.Area);
        // Whole numbers only: a tick every count when there are few, and never a fractional label.
        chart.getStyler().setYAxisTickMarkSpacingHint(Math.max(25, 330 / (top + 1)));
        chart.getStyler().setyAxisTickLabelsFormattingFunction(v -> Math.abs(v - Math.rint(v)) < 1e-9 ? Long.toString(Math.round(v)) : "");
        bars(chart, "fault → new leader (n=" + election.size() + ")", a, width, 0, new Color(0x1F, 0x77, 0xB4));
        bars(chart, "fault → first acknowledged write (n=" + firstAck.size() + ")", b, width, 1, new Color(0xFF, 0x7F, 0x0E));
        chart.addAnnotation(new AnnotationLine(electionTimeoutMs, true, false));
        chart.getStyler().setAnnotationLineColor(FAULT);
        chart.getStyler().setAnnotationLineStroke(new java.awt.BasicStroke(2f));
        chart.addAnnotation(new AnnotationText("election timeout " + electionTimeoutMs + " ms", electionTimeoutMs, top + 0.6, false));
        return BitmapEncoder.getBitmapBytes(chart, BitmapEncoder.BitmapFormat.PNG);
    }

    static int[] counts(List<Double> values, double width, int bins) {
        int[] c = new int[bins];
        for (double v : values) {
            c[(int) Math.max(0, Math.min(bins - 1, Math.floor(v / width)))]++;
        }
        return c;
    }

    /** Bars of half a bin, the {@code slot}-th half of each bin, as one area series of rectangles. */
    private static void bars(XYChart chart, String name, int[] counts, double width, int slot, Color color) {
        List<Double> x = new ArrayList<>();
        List<Double> y = new ArrayList<>();
        double inset = width * 0.05;
        for (int i = 0; i < counts.length; i++) {
            double x0 = i * width + slot * width / 2 + inset;
            double x1 = x0 + width / 2 - 2 * inset;
            x.add(x0);
            y.add(0.0);
            x.add(x0);
            y.add((double) counts[i]);
            x.add(x1);
            y.add((double) counts[i]);
            x.add(x1);
            y.add(0.0);
        }
        XYSeries s = chart.addSeries(name, x, y);
        s.setMarker(SeriesMarkers.NONE);
        s.setLineColor(color);
        s.setFillColor(color);
    }

    static double niceWidth(double raw) {
        double[] steps = {1, 2, 5};
        double scale = 1;
        while (true) {
            for (double st : steps) {
                if (st * scale >= raw) {
                    return st * scale;
                }
            }
            scale *= 10;
        }
    }
}
