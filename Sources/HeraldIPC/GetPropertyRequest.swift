/// `DNSServiceGetProperty`: a property name. The daemon answers with a raw `GetPropertyReply`, not a frame.
public struct GetPropertyRequest: IPCRequestMessage {
    public static let operation = RequestOperation.getProperty

    /// The only property defined: the daemon's API version as a `uint32` (`kDNSServiceProperty_DaemonVersion`).
    public static let daemonVersion = "DaemonVersion"

    /// The property name (at most 255 bytes).
    public var name: String

    public init(name: String) {
        self.name = name
    }

    public init(reading reader: inout IPCBodyReader, header: IPCHeader) throws(IPCDecodeError) {
        name = try reader.readString(.property, maximumLength: IPCConstants.maximumShortStringLength)
    }

    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {
        try writer.writeString(name, .property, maximumLength: IPCConstants.maximumShortStringLength)
    }
}
