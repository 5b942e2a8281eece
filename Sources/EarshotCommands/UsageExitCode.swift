import DaemonArguments

extension Earshot {
    /// `UsageExit.main`: a usage error exits 2 instead of 64. Being declared on the type, this is
    /// the `main()` that `Earshot.main()` calls.
    public static func main() async {
        await UsageExit.main(Earshot.self)
    }
}
