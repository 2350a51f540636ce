import HeraldControl

/// Rows printed with aligned columns (two spaces apart), with a title row only on a terminal. Cells are shown
/// with their control characters escaped (``OperatorText``), and aligned as shown.
struct Table {
    var titles: [String]
    var rows: [[String]] = []

    init(titles: [String]) {
        self.titles = titles
    }

    mutating func append(_ row: [String]) { rows.append(row.map(OperatorText.escaped)) }

    func print() {
        let all = (Terminal.standardOutputIsTerminal ? [titles] : []) + rows
        guard let columns = all.map(\.count).max() else { return }
        var widths = [Int](repeating: 0, count: columns)
        for row in all {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        for (number, row) in all.enumerated() {
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(widths[index])
            }
            let line = cells.joined(separator: "  ").trimmingTrailingSpaces()
            let isTitle = Terminal.standardOutputIsTerminal && number == 0
            StandardOutput.line([Painted(line, isTitle ? .dim : nil)])
        }
    }
}
