from benchtui.cli.main import program

program()
