// A stand-in for the one part of HeraldEngine that the service-file parsers' StaticService.swift names:
// `ServiceRegistration`, the value a static service becomes when it is published. Fuzz/build.sh builds it as
// a module called HeraldEngine for the service-file target only, so that target needs neither the engine nor
// its dependencies. Its initializer has the engine's signature (the build fails if they part ways); nothing in
// the fuzz target depends on what it does.

import HeraldWire

public struct ServiceRegistration: Hashable, Sendable {
    public var instance: String
    public var type: DNSName
    public var subtypes: [String]
    public var host: DNSName?
    public var port: UInt16
    public var txt: TXTRecord
    public var autoRename: Bool
    public var interfaceIndex: Int?

    public init(instance: String, type: DNSName, subtypes: [String] = [], host: DNSName? = nil, port: UInt16,
                txt: TXTRecord = .empty, autoRename: Bool = true, interfaceIndex: Int? = nil) {
        self.instance = instance
        self.type = type
        self.subtypes = subtypes
        self.host = host
        self.port = port
        self.txt = txt
        self.autoRename = autoRename
        self.interfaceIndex = interfaceIndex
    }
}
