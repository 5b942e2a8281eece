import Foundation
import PackagePlugin

/// Generates `EarshotVersion` (Version.swift) from the repository's VERSION file, the one place
/// the version is written. VERSION is the command's input file, so editing it reruns the
/// command and rebuilds the module on the next build, no clean build needed.
@main
struct EarshotVersionPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let version = context.package.directoryURL.appendingPathComponent("VERSION")
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("Version.swift")
        return [
            .buildCommand(
                displayName: "Generating Version.swift from VERSION",
                executable: try context.tool(named: "EarshotVersionGenerator").url,
                arguments: [version.path, output.path],
                inputFiles: [version],
                outputFiles: [output])
        ]
    }
}
