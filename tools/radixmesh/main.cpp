// radixmesh: the command-line tool. Parses the command line, runs the chosen command, and turns
// every failure into one stderr line and a documented exit code (docs/cli.md).
#include <cstdio>
#include <exception>
#include <filesystem>
#include <new>
#include <string>

#include "cli_common.hpp"
#include "commands.hpp"
#include "mpi_launch.hpp"

#ifndef RXM_VERSION
#define RXM_VERSION "unknown"
#endif

namespace cli = radixmesh::cli;

namespace {

constexpr cli::CommandRegistrar registrars[] = {
    cli::register_sort,
    cli::register_generate,
    cli::register_info,
    cli::register_bench,
    cli::register_multisplit,
    cli::register_topk,
    cli::register_shuffle,
};

int fail(int code, std::string message) {
  // One printable line, whatever the source: CLI11 messages can carry newlines, and they quote
  // command-line arguments as given.
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  std::fprintf(stderr, "radixmesh: error: %s\n", radixmesh::printable_text(message).c_str());
  return code;
}

void add_footer_to_subcommands(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    sub->footer(cli::exit_codes_footer);
    add_footer_to_subcommands(*sub);
  }
}

// Everything that can throw runs inside the catches below, command-line setup included, so no
// exception ever reaches std::terminate.
int run(int argc, char** argv) {
  CLI::App app{"radixmesh: sort, generate and benchmark arrays of keys on CPUs and GPUs", "radixmesh"};
  app.footer(cli::exit_codes_footer);
  app.set_version_flag("--version", "radixmesh " RXM_VERSION);
  app.require_subcommand(1);

  std::vector<cli::Command> commands;
  const cli::Invocation invocation{argc, argv};
  for (auto registrar : registrars)
    for (auto& command : registrar(app, invocation)) commands.push_back(std::move(command));
  add_footer_to_subcommands(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    return fail(cli::exit_usage, std::string(e.what()) + ". fix: see 'radixmesh --help' or '<command> --help'");
  }
  for (auto& command : commands)
    if (command.app->parsed()) command.run();
  return cli::exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  // An interrupted write (Ctrl-C, kill, a closed terminal) removes its temporary file.
  radixmesh::remove_temporary_files_on_signals();
  try {
    cli::MpiSession mpi(argc, argv);  // under mpirun: MPI for the ranked commands (radixmesh sort)
    return run(argc, argv);
  } catch (const radixmesh::Error& e) {
    return fail(cli::exit_code_of(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return fail(cli::exit_out_of_memory, "out of host memory. fix: use a smaller input, or a machine with more memory");
  } catch (const std::filesystem::filesystem_error& e) {
    return fail(cli::exit_io, std::string(e.what()) + ". fix: check the paths and their permissions");
  } catch (const std::exception& e) {
    return fail(cli::exit_internal, std::string("internal error: ") + e.what() +
                                        ". fix: this is a bug in radixmesh; please report it with the command line");
  } catch (...) {
    return fail(cli::exit_internal,
                "internal error: an unknown exception. fix: this is a bug in radixmesh; please report it with the "
                "command line");
  }
}
