import RoutingPolicy

/// How two earbuds' wear states combine into one "worn" answer: the config's `[drivers] in-ear`
/// itself (one concept, one type; the drivers read it under this name).
public typealias WearRule = EarbudWearRule
