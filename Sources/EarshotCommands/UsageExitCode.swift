import DaemonArguments

extension Earshot {
    /// `UsageExit.mainSynchronously`: a usage error exits 2 instead of 64, and only `graph`
    /// (asynchronous) starts the concurrency runtime's threads. Being declared on the type, this
    /// is the `main()` that `Earshot.main()` calls.
    public static func main() {
        UsageExit.mainSynchronously(Earshot.self)
    }
}
