/// A set of small indexes (a route's profile devices or profiles) without a heap allocation
/// when every index is below 128, as on almost every card: a dump of thousands of cards holds
/// tens of thousands of routes, and two arrays each made them the largest part of a graph.
/// Larger or negative indexes go to an overflow list, kept sorted and distinct.
public struct RouteIndexSet: Sendable, Hashable, Codable, ExpressibleByArrayLiteral, Sequence {
    private var low: UInt64 = 0
    private var high: UInt64 = 0
    private var others: [Int]?

    public init() {}

    public init(_ indexes: some Sequence<Int>) {
        for index in indexes { insert(index) }
    }

    public init(arrayLiteral elements: Int...) { self.init(elements) }

    public mutating func insert(_ index: Int) {
        switch index {
        case 0..<64: low |= 1 << UInt64(index)
        case 64..<128: high |= 1 << UInt64(index - 64)
        default:
            var list = others ?? []
            let at = list.firstIndex { $0 >= index } ?? list.count
            if at == list.count || list[at] != index { list.insert(index, at: at) }
            others = list
        }
    }

    public func contains(_ index: Int) -> Bool {
        switch index {
        case 0..<64: low & (1 << UInt64(index)) != 0
        case 64..<128: high & (1 << UInt64(index - 64)) != 0
        default: others?.contains(index) ?? false
        }
    }

    public var isEmpty: Bool { low == 0 && high == 0 && (others?.isEmpty ?? true) }

    /// The indexes in ascending order.
    public var sorted: [Int] {
        var result = (others ?? []).filter { $0 < 0 }
        for bit in 0..<64 where low & (1 << UInt64(bit)) != 0 { result.append(bit) }
        for bit in 0..<64 where high & (1 << UInt64(bit)) != 0 { result.append(bit + 64) }
        result += (others ?? []).filter { $0 >= 128 }
        return result
    }

    public func makeIterator() -> IndexingIterator<[Int]> { sorted.makeIterator() }

    /// The smallest index, if any.
    public var first: Int? { sorted.first }

    public init(from decoder: any Decoder) throws {
        self.init(try [Int](from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try sorted.encode(to: encoder)
    }
}
