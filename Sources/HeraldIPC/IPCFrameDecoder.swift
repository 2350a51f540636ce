/// Splits a byte stream from a socket into complete frames, without I/O.
///
/// Feed it whatever each read returned; it returns every frame completed so far and keeps at most one
/// partial frame (28 + `maximumDataLength` bytes). A header whose version is wrong or whose `datalen` is
/// over the maximum is rejected as soon as its 28 bytes are in, before any of its body; after an error the
/// decoder stays failed and the connection should be closed.
public struct IPCFrameDecoder: Sendable {
    public let maximumDataLength: Int

    private var buffer: [UInt8] = []
    private var header: IPCHeader?
    private var failure: IPCDecodeError?

    public init(maximumDataLength: Int = IPCConstants.maximumDataLength) {
        self.maximumDataLength = maximumDataLength
    }

    /// Bytes held for the frame in progress.
    public var bufferedByteCount: Int { buffer.count }

    /// How many more bytes complete the header or frame in progress: a read of at most this many never
    /// crosses into the next frame (useful to line up a passed socket with the frame it belongs to).
    public var bytesWanted: Int {
        if let header { return Int(header.dataLength) - buffer.count }
        return IPCHeader.length - buffer.count
    }

    /// True when no partial frame is held.
    public var isIdle: Bool { header == nil && buffer.isEmpty }

    /// Takes the next bytes of the stream and returns the frames they complete, in order.
    public mutating func feed(_ bytes: some Collection<UInt8>) throws(IPCDecodeError) -> [IPCFrame] {
        if let failure { throw failure }
        var frames: [IPCFrame] = []
        var index = bytes.startIndex
        while true {
            if header == nil && buffer.count == IPCHeader.length {
                do {
                    header = try IPCHeader.decode(buffer, maximumDataLength: maximumDataLength)
                } catch {
                    failure = error
                    buffer = []
                    throw error
                }
                buffer.removeAll(keepingCapacity: true)
            }
            if let current = header, buffer.count == Int(current.dataLength) {
                frames.append(IPCFrame(header: current, body: buffer))
                header = nil
                buffer = []
                continue
            }
            guard index != bytes.endIndex else { break }
            let available = bytes.distance(from: index, to: bytes.endIndex)
            let take = min(bytesWanted, available)
            let end = bytes.index(index, offsetBy: take)
            buffer.append(contentsOf: bytes[index..<end])
            index = end
        }
        return frames
    }

    /// Checks that the stream ended on a frame boundary.
    public func finish() throws(IPCDecodeError) {
        if let failure { throw failure }
        if !isIdle { throw .streamEndedMidFrame(bufferedBytes: buffer.count + (header == nil ? 0 : IPCHeader.length)) }
    }
}
