import Testing

@testable import HeraldEngine

@Suite("A value per link, lent in place")
struct LinkTableTests {
    let v4 = LinkID(interfaceIndex: 2, family: .ipv4)
    let v6 = LinkID(interfaceIndex: 2, family: .ipv6)
    let other = LinkID(interfaceIndex: 3, family: .ipv4)

    @Test("values are set, changed in place, read, and removed by setting nil; keys keep their order")
    func setChangeRemove() {
        var table: LinkTable<[Int]> = [v4: [1]]
        #expect(table[v6] == nil)
        table[v6] = [2]
        table[v4]?.append(10)
        table[other, default: []].append(3)
        #expect(table.keys == [v4, v6, other])
        #expect(Array(table.values) == [[1, 10], [2], [3]])
        // A change through optional chaining on a missing link adds nothing.
        table[LinkID(interfaceIndex: 9, family: .ipv6)]?.append(4)
        #expect(table.keys.count == 3)
        table[v6] = nil
        #expect(table.keys == [v4, other])
        #expect(table[v4] == [1, 10])
        table[v4] = nil
        #expect(table[v4] == nil)
        #expect(table.keys == [other] && table[other] == [3])
        table[other] = nil
        #expect(table.keys.isEmpty && Array(table.values).isEmpty)
    }

    @Test("a value changed in place is not copied: its storage stays the same")
    func changedInPlace() {
        var table: LinkTable<[Int]> = [v4: Array(repeating: 0, count: 1000)]
        let before = table[v4]!.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        for n in 0..<1000 { table[v4]![n] = n }
        let after = table[v4]!.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        #expect(before == after)
        #expect(table[v4]!.last == 999)
    }
}
