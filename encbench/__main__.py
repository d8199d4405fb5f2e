from encbench.cli import main

main()
