import ArgumentParser
import HeraldControl
import HeraldFiles
import HeraldWire

/// `herald inspect FILE`: decodes captured mDNS messages and prints them as zone-file text.
struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Decode mDNS messages from a file and print them.",
        discussion: """
            FILE holds either one raw DNS message (a UDP payload) or a capture of several, each preceded
            by its length as two big-endian bytes. Malformed messages are reported with the byte offset
            and the rule they break, and the rest are still printed.
            """
    )

    @Argument(help: "The file to read ('-' for standard input).")
    var file: String

    @Option(help: "Print at most this many messages.")
    var limit: Int?

    @Flag(help: "Print one JSON object per message instead of text.")
    var json = false

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
    }

    func run() throws {
        let read = try? (file == "-" ? FileContents.readAll(from: 0) : FileContents.read(file)).get()
        guard let bytes = read else {
            printError("herald: inspect: cannot read \(file): check that the file exists and is readable")
            throw ExitCode(65)
        }
        let messages = (try? CorpusReader.messages(in: bytes)).flatMap { $0.isEmpty ? nil : $0 } ?? [bytes]
        var failures = 0
        for (index, message) in messages.prefix(limit ?? messages.count).enumerated() {
            do {
                let parsed = try DNSMessage(parsing: message)
                print(
                    json
                        ? OperatorText.jsonEscaped(MessageFormatter.json(parsed, index: index))
                        : OperatorText.escapedKeepingLines(
                            MessageFormatter.text(parsed, index: index, size: message.count)))
            } catch {
                failures += 1
                printError("herald: inspect: message \(index + 1) (\(message.count) bytes) is malformed \(error)")
            }
        }
        if failures > 0 { throw ExitCode(65) }
    }
}
