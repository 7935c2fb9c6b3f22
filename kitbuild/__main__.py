from kitbuild.entry import main

main()
