import EarshotCommands

/// The whole executable: every command lives in EarshotCommands, where tests can reach it.
@main
enum EarshotMain {
    static func main() {
        Earshot.main()
    }
}
