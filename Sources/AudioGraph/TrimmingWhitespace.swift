extension StringProtocol {
    /// Without the whitespace (spaces, tabs, line ends: `Character.isWhitespace`) at either end.
    public var trimmingWhitespace: SubSequence {
        var text = self[...]
        while let first = text.first, first.isWhitespace { text = text.dropFirst() }
        while let last = text.last, last.isWhitespace { text = text.dropLast() }
        return text
    }
}
