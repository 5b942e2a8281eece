/// How two earbuds' wear states combine into one "worn" answer.
public enum WearRule: String, Sendable, Hashable, CaseIterable, Codable {
    /// Worn while at least one bud is in an ear (the default: one-bud listening is common).
    case either
    /// Worn only while both buds are in ears.
    case both
}
