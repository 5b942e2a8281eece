import EarshotCommands

await Earshot.main()
