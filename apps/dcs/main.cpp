#include "cli.hpp"

int main(int argc, char** argv) { return dcs::app::main_entry(argc, argv); }
