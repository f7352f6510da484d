from omk.cli.main import main

raise SystemExit(main())
