from benchtui.cli.main import main

raise SystemExit(main())
