from kitbuild.cli import main

main()
