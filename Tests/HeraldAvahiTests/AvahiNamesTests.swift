import Testing

@testable import HeraldAvahi

@Suite struct AvahiNamesTests {
    @Test func alternativeServiceNamesCountUp() {
        #expect(AvahiNames.alternativeServiceName("Printer") == "Printer #2")
        #expect(AvahiNames.alternativeServiceName("Printer #2") == "Printer #3")
        #expect(AvahiNames.alternativeServiceName("Printer #") == "Printer # #2")
    }

    @Test func alternativeHostNamesCountUp() {
        #expect(AvahiNames.alternativeHostName("box") == "box-2")
        #expect(AvahiNames.alternativeHostName("box-9") == "box-10")
    }

    @Test func subtypesAreTheirFirstLabel() {
        #expect(AvahiNames.subtypeLabel("_printer._sub._http._tcp", of: "_http._tcp") == "_printer")
        #expect(AvahiNames.subtypeLabel("_printer._sub._ipp._tcp", of: "_http._tcp") == nil)
        #expect(AvahiNames.subtypeLabel("_printer._http._tcp", of: "_http._tcp") == nil)
    }

    @Test func txtStringsRoundTrip() {
        let strings: [[UInt8]] = [Array("a=1".utf8), [], Array("b".utf8)]
        let rdata = AvahiNames.txtRData(strings)
        #expect(rdata == [3, 97, 61, 49, 0, 1, 98])
        #expect(AvahiNames.txtStrings(rdata ?? []) == strings)
        #expect(AvahiNames.txtStrings([0]) == [])
        #expect(AvahiNames.txtRData([[UInt8](repeating: 1, count: 256)]) == nil)
    }

    @Test func addressesArePrintedAsAvahiPrintsThem() {
        #expect(AvahiNames.address([10, 0, 0, 9]) == "10.0.0.9")
        #expect(AvahiNames.address([0xFE, 0x80] + [UInt8](repeating: 0, count: 13) + [9]) == "fe80::9")
        #expect(AvahiNames.address([1, 2]) == nil)
    }

    @Test func enumeratedTypesAreSplitAsAvahiSplitsThem() {
        let split = AvahiNames.enumeratedType(name: "_http", regtype: "_tcp.local.", domain: ".")
        #expect(split.type == "_http._tcp")
        #expect(split.domain == "local")
    }
}
