import HeraldIPC
import Testing

@Suite("Frame decoder")
struct FrameDecoderTests {
    /// A register request with TXT followed by a cancel, as one stream.
    static func twoFrameStream() throws -> (bytes: [UInt8], frames: [IPCFrame]) {
        let first = try RegisterServiceRequest(
            name: "Game", regtype: "_tictactoe._tcp", port: 8080, txt: [7] + Array("level=3".utf8)
        ).encodeFrame(context: sampleContext)
        let second = try BrowseRequest(regtype: "_http._tcp").encodeFrame(
            context: ClientContext(rawValue: 2), connection: .established)
        return (first.bytes + second.bytes, [first.frame, second.frame])
    }

    @Test("a two-frame stream split at every byte boundary yields the same two frames")
    func everySplit() throws {
        let (bytes, frames) = try Self.twoFrameStream()
        for cut in 0...bytes.count {
            var decoder = IPCFrameDecoder()
            var out = try decoder.feed(bytes[..<cut])
            out += try decoder.feed(bytes[cut...])
            #expect(out == frames, "split at \(cut)")
            #expect(decoder.isIdle)
            try decoder.finish()
        }
    }

    @Test("a two-frame stream split at every pair of boundaries yields the same two frames")
    func everyDoubleSplit() throws {
        let (bytes, frames) = try Self.twoFrameStream()
        for a in 0...bytes.count {
            for b in a...bytes.count {
                var decoder = IPCFrameDecoder()
                var out = try decoder.feed(bytes[..<a])
                out += try decoder.feed(bytes[a..<b])
                out += try decoder.feed(bytes[b...])
                #expect(out == frames)
            }
        }
    }

    @Test("one byte at a time, frames appear exactly when their last byte arrives")
    func byteAtATime() throws {
        let (bytes, frames) = try Self.twoFrameStream()
        let firstEnd = frames[0].encoded.count
        var decoder = IPCFrameDecoder()
        var out: [IPCFrame] = []
        for (i, byte) in bytes.enumerated() {
            let wanted = decoder.bytesWanted
            #expect(wanted >= 1)
            let got = try decoder.feed([byte])
            if i == firstEnd - 1 || i == bytes.count - 1 {
                #expect(got.count == 1)
                #expect(wanted == 1)
            } else {
                #expect(got.isEmpty)
            }
            out += got
        }
        #expect(out == frames)
    }

    @Test("bytesWanted never lets a read cross into the next frame")
    func readsLineUp() throws {
        let (bytes, frames) = try Self.twoFrameStream()
        var decoder = IPCFrameDecoder()
        var at = 0
        var ends: [Int] = []
        while at < bytes.count {
            let take = decoder.bytesWanted
            let got = try decoder.feed(bytes[at..<at + take])
            at += take
            if !got.isEmpty { ends.append(at) }
        }
        #expect(ends == [frames[0].encoded.count, bytes.count])
    }

    @Test("zero-length bodies come out as soon as their header is complete")
    func emptyBodies() throws {
        let cancel = try CancelRequest().encodeFrame(connection: .established).bytes
        var decoder = IPCFrameDecoder()
        let frames = try decoder.feed(cancel + cancel + cancel)
        #expect(frames.count == 3)
        #expect(frames.allSatisfy { $0.body.isEmpty && $0.header.operation == 63 })
    }

    @Test("an oversize datalen is refused at once, and the decoder stays failed")
    func oversize() throws {
        var decoder = IPCFrameDecoder(maximumDataLength: 65_536)
        let header = headerBytes(dataLength: 65_537, op: 5)
        #expect(try decoder.feed(header.prefix(27)).isEmpty)
        #expect(throws: IPCDecodeError.dataLengthTooLarge(declared: 65_537, maximum: 65_536)) {
            try decoder.feed(header.suffix(1))
        }
        #expect(decoder.bufferedByteCount == 0)
        #expect(throws: IPCDecodeError.dataLengthTooLarge(declared: 65_537, maximum: 65_536)) {
            try decoder.feed(try BrowseRequest(regtype: "_a._tcp").encodeFrame().bytes)
        }
    }

    @Test("a wrong version is refused at once")
    func wrongVersion() {
        var decoder = IPCFrameDecoder()
        var header = headerBytes(dataLength: 4, op: 6)
        header[3] = 7
        #expect(throws: IPCDecodeError.unsupportedVersion(7)) { try decoder.feed(header + [0, 0, 0, 0]) }
    }

    @Test("buffering never exceeds one partial frame")
    func bounded() throws {
        var decoder = IPCFrameDecoder(maximumDataLength: 1_000)
        let body = [UInt8](repeating: 0x41, count: 1_000)
        let frame = headerBytes(dataLength: 1_000, op: 12) + body
        var stream: [UInt8] = []
        for _ in 0..<50 { stream += frame }
        var count = 0
        var at = 0
        while at < stream.count {
            let chunk = min(777, stream.count - at)
            count += try decoder.feed(stream[at..<at + chunk]).count
            at += chunk
            #expect(decoder.bufferedByteCount <= 1_000)
        }
        #expect(count == 50)
    }

    @Test("a stream that ends mid-frame is reported by finish")
    func endsMidFrame() throws {
        var decoder = IPCFrameDecoder()
        let bytes = try BrowseRequest(regtype: "_http._tcp").encodeFrame().bytes
        _ = try decoder.feed(bytes.dropLast(3))
        #expect(throws: IPCDecodeError.streamEndedMidFrame(bufferedBytes: bytes.count - 3)) { try decoder.finish() }
        var fresh = IPCFrameDecoder()
        _ = try fresh.feed(bytes.prefix(10))
        #expect(throws: IPCDecodeError.streamEndedMidFrame(bufferedBytes: 10)) { try fresh.finish() }
    }

    @Test("decoded frames decode as the requests that were sent")
    func framesToRequests() throws {
        let (bytes, _) = try Self.twoFrameStream()
        var decoder = IPCFrameDecoder()
        let frames = try decoder.feed(bytes)
        let first = try DecodedRequest.decode(header: frames[0].header, body: frames[0].body, connection: .new)
        let second = try DecodedRequest.decode(header: frames[1].header, body: frames[1].body, connection: .established)
        #expect(first.request.operation == .registerService)
        #expect(second.request == .browse(BrowseRequest(regtype: "_http._tcp")))
        #expect(second.statusReturn == .passedSocket)
        #expect(second.header.context == ClientContext(rawValue: 2))
    }
}
