import HeraldControl
import Testing

@Suite("herald status against a daemon of an earlier release")
struct StatusCompatibilityTests {
    @Test("an interface without an MTU decodes, with none shown")
    func interfaceWithoutMTU() throws {
        let line = #"{"name":"eth0","index":2,"addresses":["10.0.0.2/24"],"cachedRecords":7}"#
        let interface = try ControlProtocol.decode(ControlStatus.Interface.self, from: Array(line.utf8))
        #expect(interface.name == "eth0" && interface.cachedRecords == 7 && interface.mtu == nil)
    }
}
