// libFuzzer target for HeraldIPC, the app-socket protocol (dnssd IPC version 1): the executable target `ipc-fuzzer`,
// which Fuzz/build.sh builds with libFuzzer and AddressSanitizer. It uses the module's public API only.
//
// Input: one control byte, then a byte stream as a client (or daemon) would write it on the socket.
//   control bits 0-1: the frame decoder's maximum datalen (default 70,000; 256; 0; 28)
//   control bits 2-7: how the stream is cut into reads (see `readSizes`)
// Every check states an invariant that holds for every input; a broken one traps with fatalError, which
// libFuzzer records as a crash. Inputs that are simply invalid (a typed decode error) are fine.

import FuzzSupport
import HeraldIPC
import HeraldWire

/// libFuzzer's driver when built by Fuzz/build.sh; otherwise a replay of the files given (`FuzzSupport.main`).
@main
enum Main {
    static func main() { FuzzSupport.main(IPCFuzzer.run) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    IPCFuzzer.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutableRawPointer) -> CInt {
    FuzzSupport.writeSeedsIfAsked(IPCFuzzer.seeds)
    return 0
}

enum IPCFuzzer {
    static func run(_ input: [UInt8]) {
        guard let control = input.first else { return }
        let stream = Array(input.dropFirst())
        let maximum = [IPCConstants.maximumDataLength, 256, 0, IPCHeader.length][Int(control & 3)]

        // 1. The stream through the frame decoder, in one read and in many.
        let whole = decodeStream([stream[...]], maximum: maximum)
        let pieces = FuzzSupport.chunks(stream, sizes: readSizes(control))
        let piecewise = decodeStream(pieces, maximum: maximum)
        // A read that completes frames and then fails on a bad header throws, so the frames it completed are
        // not returned; read in smaller pieces, those frames come out before the failing read. Otherwise the
        // read boundaries make no difference.
        guard whole.error == piecewise.error, piecewise.frames.starts(with: whole.frames),
            whole.error != nil || whole.frames == piecewise.frames
        else {
            fail("the frame decoder gives different frames or errors for the same bytes read in \(pieces.count) pieces")
        }
        for frame in piecewise.frames.prefix(16) { checkFrame(frame) }

        // 2. The stream as one frame whose datalen is whatever follows the header, so bodies need no matching
        //    length to be reached; the version is forced to 1.
        if stream.count >= IPCHeader.length {
            var bytes = stream
            bytes[0...3] = [0, 0, 0, 1]
            if var header = try? IPCHeader.decode(bytes, maximumDataLength: Int(UInt32.max)) {
                guard header.encoded == Array(bytes.prefix(IPCHeader.length)) else {
                    fail("IPCHeader.decode(b).encoded != b for \(FuzzSupport.hex(bytes.prefix(IPCHeader.length)))")
                }
                let body = Array(bytes.dropFirst(IPCHeader.length))
                header.dataLength = UInt32(body.count)
                checkFrame(IPCFrame(header: header, body: body))
                // The same body as every request and reply operation.
                let operation = header.operation
                for code in [operation, operation & 0x0F, (operation & 0x0F) | 0x40, 63] where code != operation {
                    header.operation = code
                    checkFrame(IPCFrame(header: header, body: body))
                }
            }
        }

        // 3. The stream as a get-property answer and as TLVs.
        checkGetPropertyReply(stream)
        checkTLVs(stream)
    }

    /// Read sizes from the control byte: 1 to 64 bytes, varying.
    static func readSizes(_ control: UInt8) -> [UInt8] {
        let base = control >> 2
        return [base + 1, base / 2 + 1, 3, base &* 7 % 64 + 1]
    }

    struct StreamResult {
        var frames: [IPCFrame] = []
        var error: IPCDecodeError?
    }

    /// Feeds the pieces in order, checking the decoder's bookkeeping after each.
    static func decodeStream(_ pieces: [ArraySlice<UInt8>], maximum: Int) -> StreamResult {
        var decoder = IPCFrameDecoder(maximumDataLength: maximum)
        var result = StreamResult()
        var fed: [UInt8] = []
        for piece in pieces {
            fed += piece
            do {
                let frames = try decoder.feed(piece)
                result.frames += frames
            } catch {
                _ = error.description
                result.error = error
                // A failed decoder stays failed.
                guard (try? decoder.feed([0])) == nil else { fail("the frame decoder accepted bytes after failing") }
                guard (try? decoder.finish()) == nil else { fail("finish() succeeded after a failure") }
                return result
            }
            // Everything fed is either in a complete frame or held for the frame in progress.
            let consumed = result.frames.reduce(0) { $0 + IPCHeader.length + $1.body.count }
            guard consumed <= fed.count, Array(fed.prefix(consumed)) == result.frames.flatMap(\.encoded) else {
                fail("the frames decoded are not the bytes fed, in order")
            }
            let held = fed.count - consumed
            let pendingHeader = held >= IPCHeader.length && decoder.bufferedByteCount != held
            guard decoder.bufferedByteCount == (pendingHeader ? held - IPCHeader.length : held) else {
                fail("the decoder holds \(decoder.bufferedByteCount) bytes, but \(held) were fed after the last frame")
            }
            guard decoder.bytesWanted > 0, decoder.isIdle == (held == 0) else {
                fail(
                    "bytesWanted (\(decoder.bytesWanted)) or isIdle (\(decoder.isIdle)) is wrong with \(held) bytes held"
                )
            }
            guard decoder.bufferedByteCount <= IPCHeader.length + decoder.maximumDataLength else {
                fail("the decoder holds more than one frame")
            }
        }
        if (try? decoder.finish()) != nil, !decoder.isIdle { fail("finish() succeeded in the middle of a frame") }
        if (try? decoder.finish()) == nil, decoder.isIdle { fail("finish() failed on a frame boundary") }
        return result
    }

    // MARK: - Frames

    static func checkFrame(_ frame: IPCFrame) {
        for connection in [IPCConnectionState.new, .established] {
            do {
                let decoded = try DecodedRequest.decode(header: frame.header, body: frame.body, connection: connection)
                checkRequest(decoded, frame: frame, connection: connection)
            } catch {
                guard !error.description.isEmpty else { fail("a request decode error has no description") }
            }
        }
        do {
            let reply = try Reply.decode(header: frame.header, body: frame.body)
            checkReply(reply, frame: frame)
        } catch {
            guard !error.description.isEmpty else { fail("a reply decode error has no description") }
        }
    }

    /// decode → encode gives exactly the bytes read (the body without its ignored tail), and decoding that
    /// again gives the same request.
    static func checkRequest(_ decoded: DecodedRequest, frame: IPCFrame, connection: IPCConnectionState) {
        let header = frame.header
        guard decoded.request.operation.rawValue == header.operation, decoded.header == header else {
            fail("the decoded request's operation or header differs from the frame's")
        }
        guard decoded.ignoredTrailingByteCount >= 0, decoded.ignoredTrailingByteCount <= frame.body.count,
            decoded.trailingTLVs.isEmpty || header.flags.contains(.trailingTLVs)
        else { fail("ignoredTrailingByteCount \(decoded.ignoredTrailingByteCount) or TLVs without the flag") }
        let operation = decoded.request.operation
        var path = ""
        switch decoded.statusReturn {
        case .namedSocket(let named): path = named
        case .none:
            guard operation == .cancel || operation == .getProperty else { fail("status .none for \(operation)") }
        case .passedSocket, .asyncErrorReply, .inBand: break
        }
        // A get-property request drops the path it read, so its bytes cannot be compared.
        let pathLost =
            operation == .getProperty
            && connection.bodyStartsWithErrorReturnPath(operation: header.operation, flags: header.flags)

        let encoded: IPCRequestFrame
        do {
            encoded = try decoded.request.encodeFrame(
                context: header.context, flags: header.flags, connection: connection, errorReturnPath: path,
                tlvs: decoded.trailingTLVs, maximumDataLength: Int.max)
        } catch {
            fail("a decoded \(operation) request does not encode: \(error)\nbody: \(FuzzSupport.hex(frame.body))")
        }
        let kept = frame.body.count - decoded.ignoredTrailingByteCount
        guard pathLost || encoded.frame.body == Array(frame.body.prefix(kept)) else {
            fail(
                "encode(decode(\(operation))) is not the bytes read\nbody:    \(FuzzSupport.hex(frame.body))\nencoded: \(FuzzSupport.hex(encoded.frame.body))"
            )
        }
        guard encoded.header.context == header.context,
            encoded.header.registrationIndex == header.registrationIndex
                || decoded.request.message.registrationIndex == 0
        else { fail("encoding a decoded \(operation) request loses the context or registration index") }
        let again: DecodedRequest
        do {
            again = try DecodedRequest.decode(header: encoded.header, body: encoded.frame.body, connection: connection)
        } catch {
            fail("our encoding of a decoded \(operation) request does not decode: \(error)")
        }
        guard again.request == decoded.request, again.trailingTLVs == decoded.trailingTLVs,
            again.ignoredTrailingByteCount == 0, pathLost || again.statusReturn == decoded.statusReturn
        else { fail("decode(encode(decode(\(operation)))) differs\nfirst:  \(decoded)\nsecond: \(again)") }
        guard pathLost || encoded.passesErrorSocket == (again.statusReturn == .passedSocket) else {
            fail("passesErrorSocket disagrees with the status route of \(operation)")
        }
        _ = "\(decoded.request)"
    }

    static func checkReply(_ reply: Reply, frame: IPCFrame) {
        guard reply.operation.rawValue == frame.header.operation else { fail("the reply's operation differs") }
        let bytes: [UInt8]
        do {
            bytes = try reply.encodeFrame(context: frame.header.context)
        } catch {
            fail("a decoded \(reply.operation) does not encode: \(error)")
        }
        let body = Array(bytes.dropFirst(IPCHeader.length))
        // An async error keeps only its error word: it is written with zero flags and interface index and an
        // empty resolve-shaped tail, whatever was read.
        var read = frame.body
        var written = body
        if case .asyncError = reply {
            read = [0, 0, 0, 0, 0, 0, 0, 0] + read[8..<12]
            written = Array(written.prefix(12))
        }
        guard read.starts(with: written) else {
            fail(
                "encode(decode(\(reply.operation))) is not the bytes read\nbody:    \(FuzzSupport.hex(frame.body))\nencoded: \(FuzzSupport.hex(body))"
            )
        }
        guard let header = try? IPCHeader.decode(bytes), header.context == frame.header.context,
            let again = try? Reply.decode(header: header, body: body), again == reply, again.error == reply.error
        else { fail("decode(encode(decode(\(reply.operation)))) differs") }
    }

    static func checkGetPropertyReply(_ bytes: [UInt8]) {
        guard let reply = try? GetPropertyReply.decode(bytes, maximumValueLength: 4096) else { return }
        let encoded = reply.encoded
        guard bytes.starts(with: encoded), GetPropertyReply.totalLength(ofPrefix: encoded) == encoded.count,
            GetPropertyReply.totalLength(ofPrefix: bytes) == encoded.count,
            (try? GetPropertyReply.decode(encoded, maximumValueLength: 4096)) == reply
        else { fail("get-property reply round trip or totalLength is wrong for \(FuzzSupport.hex(bytes.prefix(64)))") }
    }

    static func checkTLVs(_ bytes: [UInt8]) {
        let items = IPCTLV.parseAll(bytes)
        var writer = IPCBodyWriter()
        for item in items {
            do { try item.write(to: &writer) } catch { fail("a parsed TLV does not encode: \(error)") }
            if let value = item.integerValue, ![1, 2, 4].contains(item.value.count) || value > UInt32.max {
                fail("integerValue of a \(item.value.count)-byte TLV")
            }
        }
        guard bytes.starts(with: writer.bytes), IPCTLV.parseAll(writer.bytes) == items else {
            fail("TLVs re-encode to other bytes")
        }
        // Parsing stops only where the next item does not fit.
        let rest = bytes.count - writer.bytes.count
        if rest >= 4 {
            let at = writer.bytes.count
            let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            guard rest - 4 < length else { fail("TLV parsing stopped before an item that fits") }
        }
    }

    // MARK: - Seeds

    static func seeds() -> [(name: String, bytes: [UInt8])] {
        let context = ClientContext(rawValue: 0x0102_0304_0506_0708)
        let txt: [UInt8] = [7] + Array("level=3".utf8)
        let requests: [(Request, IPCConnectionState, IPCFlags, String)] = [
            (.connection(ConnectionRequest()), .new, [], ""),
            (.browse(BrowseRequest(regtype: "_http._tcp", domain: "local.")), .new, [], ""),
            (.browse(BrowseRequest(regtype: "_ipp._tcp,_printer", domain: "")), .established, [], ""),
            (
                .registerService(
                    RegisterServiceRequest(
                        flags: .noAutoRename, interfaceIndex: 2, name: "Game", regtype: "_tictactoe._tcp", port: 8080,
                        txt: txt)), .new, [], ""
            ),
            (
                .registerService(RegisterServiceRequest(flags: .shareConnection, regtype: "_http._tcp", port: 80)),
                .established, [], ""
            ),
            (
                .resolve(ResolveRequest(name: "Game", regtype: "_tictactoe._tcp", domain: "local.")), .established,
                [.noErrorSocket], ""
            ),
            (.query(QueryRecordRequest(name: "host.local.", rrtype: 28)), .established, [], "/tmp/err"),
            (.addrInfo(AddrInfoRequest(hostname: "host.local.")), .new, [], ""),
            (.getProperty(GetPropertyRequest(name: "DaemonVersion")), .new, [], ""),
            (.enumeration(EnumerationRequest(flags: .browseDomains)), .new, [], ""),
            (.setDomain(SetDomainRequest(domain: "local.")), .new, [], ""),
            (
                .registerRecord(
                    RegisterRecordRequest(
                        recordIndex: 3, flags: .unique, fullname: "host.local.", rrtype: 1, rdata: [10, 0, 0, 1],
                        ttl: 120)),
                .established, [], ""
            ),
            (.addRecord(AddRecordRequest(recordIndex: 1, rrtype: 16, rdata: txt, ttl: 4500)), .established, [], ""),
            (.updateRecord(UpdateRecordRequest(recordIndex: 0, rdata: txt, ttl: 4500)), .established, [], ""),
            (.removeRecord(RemoveRecordRequest(recordIndex: 1)), .established, [], ""),
            (.reconfirm(ReconfirmRequest(fullname: "host.local.", rrtype: 1, rdata: [10, 0, 0, 1])), .new, [], ""),
            (.cancel(CancelRequest()), .established, [], ""),
        ]
        var seeds: [(name: String, bytes: [UInt8])] = []
        for (index, (request, connection, flags, path)) in requests.enumerated() {
            let tlvs = index % 3 == 0 ? [IPCTLV(type: IPCTLV.aaaaPolicy, value: [0, 0, 0, 1])] : []
            guard
                let frame = try? request.encodeFrame(
                    context: context, flags: flags, connection: connection, errorReturnPath: path, tlvs: tlvs)
            else { continue }
            seeds.append(("request-\(index)", [UInt8(index * 4)] + frame.bytes))
        }
        let replies: [Reply] = [
            .browse(
                BrowseReply(
                    flags: .add, interfaceIndex: 2, name: "Game", regtype: "_tictactoe._tcp.",
                    domain: "local.")),
            .resolve(
                ResolveReply(
                    fullname: "Game._tictactoe._tcp.local.", hostTarget: "host.local.", port: 8080,
                    txt: txt)),
            .registerService(RegisterServiceReply(name: "Game", regtype: "_tictactoe._tcp.", domain: "local.")),
            .query(QueryRecordReply(fullname: "host.local.", rrtype: 1, rdata: [10, 0, 0, 1], ttl: 120)),
            .addrInfo(AddrInfoReply(hostname: "host.local.", rrtype: 1, rrclass: 1, rdata: [10, 0, 0, 1], ttl: 120)),
            .enumeration(EnumerationReply(domain: "local.")),
            .registerRecord(RegisterRecordReply()),
            .asyncError(AsyncErrorReply(error: .noAuth)),
        ]
        for (index, reply) in replies.enumerated() {
            guard let bytes = try? reply.encodeFrame(context: context) else { continue }
            seeds.append(("reply-\(index)", [UInt8(index * 8 + 1)] + bytes))
        }
        seeds.append(("property", [0] + GetPropertyReply.daemonVersion(1).encoded))
        return seeds
    }

    static func fail(_ message: String) -> Never {
        fatalError("HeraldIPC fuzz invariant broken: " + message)
    }
}
