import Foundation

// `--plot PATH`: the scaling figures as an SVG chart, one panel per operation, rows/s against
// records on log scales; per backend ours as a solid line, the raw baseline dashed.

private let panelWidth = 440.0
private let panelHeight = 300.0
private let margin = (left: 70.0, right: 20.0, top: 40.0, bottom: 45.0)
private let colors = ["sqlite": "#1f77b4", "lmdb": "#d62728", "archive": "#2ca02c", "postgresql": "#9467bd"]

private func escape(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
}

private func format(_ number: Double) -> String { String(format: "%.1f", number) }

/// A power of ten as the axes label it: 10k, 1M, ...
private func label(_ value: Double) -> String {
    switch value {
    case 1e9...: return "\(Int(value / 1e9))G"
    case 1e6...: return "\(Int(value / 1e6))M"
    case 1e3...: return "\(Int(value / 1e3))k"
    default: return "\(Int(value))"
    }
}

/// The SVG document for `points`.
func scalingChart(_ points: [ScalePoint], sizes: [Int]) -> String {
    var operations: [String] = []
    for point in points where !operations.contains(point.operation) { operations.append(point.operation) }
    var backends: [String] = []
    for point in points where !backends.contains(point.backend) { backends.append(point.backend) }
    let columns = min(2, max(1, operations.count))
    let rows = (operations.count + columns - 1) / columns
    let legendHeight = 30.0
    let width = Double(columns) * panelWidth
    let height = Double(rows) * panelHeight + legendHeight
    var svg = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
        viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>

        """
    // Legend: one entry per backend and kind.
    var x = 10.0
    for backend in backends {
        let color = colors[backend] ?? "#555"
        for (kind, dash) in [("ObjectStore", ""), ("raw", " stroke-dasharray=\"6 4\"")] {
            svg += "<line x1=\"\(format(x))\" y1=\"15\" x2=\"\(format(x + 30))\" y2=\"15\" stroke=\"\(color)\""
            svg += " stroke-width=\"2\"\(dash)/>\n"
            svg += "<text x=\"\(format(x + 36))\" y=\"19\">\(escape(backend)) \(kind)</text>\n"
            x += 150
        }
    }
    let smallest = Double(sizes.min() ?? 1)
    let largest = Double(max(sizes.max() ?? 10, (sizes.min() ?? 1) * 10))
    let xMin = log10(smallest)
    let xMax = max(log10(largest), xMin + 1)
    for (index, operation) in operations.enumerated() {
        let originX = Double(index % columns) * panelWidth
        let originY = legendHeight + Double(index / columns) * panelHeight
        let plot = (
            left: originX + margin.left, right: originX + panelWidth - margin.right,
            top: originY + margin.top, bottom: originY + panelHeight - margin.bottom
        )
        let series = points.filter { $0.operation == operation }
        let rates = series.flatMap { [$0.rowsPerSecond, $0.baselineRowsPerSecond] }.filter { $0 > 0 }
        let yMin = floor(log10(rates.min() ?? 1))
        let yMax = max(ceil(log10(rates.max() ?? 10)), yMin + 1)
        func px(_ records: Double) -> Double {
            plot.left + (log10(records) - xMin) / (xMax - xMin) * (plot.right - plot.left)
        }
        func py(_ rate: Double) -> Double {
            plot.bottom - (log10(rate) - yMin) / (yMax - yMin) * (plot.bottom - plot.top)
        }
        svg += "<text x=\"\(format((plot.left + plot.right) / 2))\" y=\"\(format(originY + 22))\""
        svg += " text-anchor=\"middle\" font-weight=\"bold\">\(escape(operation)): rows/s against records</text>\n"
        // Grid and ticks at every power of ten.
        var decade = ceil(xMin)
        while decade <= xMax + 1e-9 {
            let value = pow(10, decade)
            svg += "<line x1=\"\(format(px(value)))\" y1=\"\(format(plot.top))\" x2=\"\(format(px(value)))\""
            svg += " y2=\"\(format(plot.bottom))\" stroke=\"#ddd\"/>\n"
            svg += "<text x=\"\(format(px(value)))\" y=\"\(format(plot.bottom + 16))\" text-anchor=\"middle\">"
            svg += "\(label(value))</text>\n"
            decade += 1
        }
        decade = yMin
        while decade <= yMax + 1e-9 {
            let value = pow(10, decade)
            svg += "<line x1=\"\(format(plot.left))\" y1=\"\(format(py(value)))\" x2=\"\(format(plot.right))\""
            svg += " y2=\"\(format(py(value)))\" stroke=\"#ddd\"/>\n"
            svg += "<text x=\"\(format(plot.left - 6))\" y=\"\(format(py(value) + 4))\" text-anchor=\"end\">"
            svg += "\(label(value))</text>\n"
            decade += 1
        }
        svg += "<rect x=\"\(format(plot.left))\" y=\"\(format(plot.top))\" width=\"\(format(plot.right - plot.left))\""
        svg += " height=\"\(format(plot.bottom - plot.top))\" fill=\"none\" stroke=\"#888\"/>\n"
        svg += "<text x=\"\(format((plot.left + plot.right) / 2))\" y=\"\(format(plot.bottom + 34))\""
        svg += " text-anchor=\"middle\">records (log scale)</text>\n"
        for backend in backends {
            let line = series.filter { $0.backend == backend }.sorted { $0.records < $1.records }
            guard !line.isEmpty else { continue }
            let color = colors[backend] ?? "#555"
            for (rate, dash) in [
                (\ScalePoint.rowsPerSecond, ""), (\ScalePoint.baselineRowsPerSecond, " stroke-dasharray=\"6 4\""),
            ] {
                let coordinates = line.map { "\(format(px(Double($0.records)))),\(format(py($0[keyPath: rate])))" }
                svg += "<polyline points=\"\(coordinates.joined(separator: " "))\" fill=\"none\" stroke=\"\(color)\""
                svg += " stroke-width=\"2\"\(dash)/>\n"
                for point in line {
                    svg +=
                        "<circle cx=\"\(format(px(Double(point.records))))\" cy=\"\(format(py(point[keyPath: rate])))\""
                    svg += " r=\"3\" fill=\"\(color)\"><title>\(escape(backend)) \(escape(operation))"
                    svg += " \(Harness.format(Double(point.records))) records: "
                    svg += "\(Harness.format(point[keyPath: rate])) rows/s</title></circle>\n"
                }
            }
        }
    }
    svg += "</svg>\n"
    return svg
}
