// `gpuplan export slurm`: one batch script per node, each running its units with `gpuplan exec`.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpuplan/error.hpp"
#include "gpuplan/run.hpp"

namespace gpuplan {

namespace {

/// Slurm node names are host names; anything else cannot go into --nodelist or a file name.
void check_node_name(const std::string& node) {
  bool ok = !node.empty() && node.front() != '-' && std::all_of(node.begin(), node.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
  if (!ok)
    throw InputError(Position{"plan"}, fmt::format("node \"{}\" is not a name Slurm accepts in --nodelist "
                                                   "(letters, digits, '-', '_', '.')",
                                                   node));
}

/// An #SBATCH value is read by sbatch, not a shell: it must stay one word on one line.
void check_sbatch_value(const std::string& option, const std::string& value) {
  if (value.empty() || value.find_first_of(" \t\r\n\"'\\") != std::string::npos)
    throw InputError(Position{option}, fmt::format("\"{}\" must be one word without quotes", value));
}

/// The options of a job's own lines, and the options that would undo them from an extra line
/// (sbatch takes the last of an option given twice): each with its short form, and why it is refused.
struct OwnOption {
  std::string_view name, short_name, why;
};
constexpr OwnOption own_options[] = {
    {"--nodelist", "-w",
     "the job runs on its node: exec checks GPUs, not the host, so its units would run on another"},
    {"--exclude", "-x", "the job runs on its node (--nodelist)"},
    {"--nodes", "-N", "the job is one node's"},
    {"--ntasks", "-n", "the job is one gpuplan exec"},
    {"--array", "-a", "each array task would run every unit of the node again"},
    {"--gres", "", "the job asks for the GPUs its units are planned on (more GRES: --gres-extra)"},
    {"--gpus", "-G", "the job asks for the GPUs its units are planned on (--gres)"},
    {"--gpus-per-node", "", "the job asks for the GPUs its units are planned on (--gres)"},
    {"--gpus-per-task", "", "the job asks for the GPUs its units are planned on (--gres)"},
    {"--oversubscribe", "-s", "the job takes its node whole (--exclusive)"},
    {"--requeue", "",
     "a job requeued after its node failed runs its units again, beside the nodes that took them (--claims), "
     "or waits for the node"},
    {"--time", "-t", "give --time-margin or --startup"},
    {"--partition", "-p", "give --partition"},
    {"--account", "-A", "give --account"},
};

std::string sbatch_line(const std::string& line) {
  if (line.find_first_of("\r\n") != std::string::npos)
    throw InputError(Position{"--sbatch-line"}, "an #SBATCH line cannot contain a line break");
  std::string full = line.starts_with("#SBATCH") ? line : "#SBATCH " + line;
  // The option: "--name" up to '=' or a blank; "-x" its first two characters ("-wnode", "-w node").
  std::string_view option = std::string_view(full).substr(std::string_view("#SBATCH").size());
  option.remove_prefix(std::min(option.size(), option.find_first_not_of(" \t")));
  option = option.substr(0, option.starts_with("--") ? option.find_first_of("= \t") : 2);
  for (const auto& own : own_options)
    if (option == own.name || (!own.short_name.empty() && option == own.short_name))
      throw InputError(Position{"--sbatch-line"},
                       fmt::format("\"{}\" would undo the job's own #SBATCH lines: {}", line, own.why));
  return full;
}

/// Seconds in whole minutes, rounded up, at least one: what --time asks for.
long whole_minutes(double seconds) { return std::max(1L, static_cast<long>(std::ceil(seconds / 60 - 1e-9))); }

/// Slurm's D-HH:MM:SS of whole minutes.
std::string slurm_time(long minutes) {
  return fmt::format("{}-{:02}:{:02}:00", minutes / 1440, minutes / 60 % 24, minutes % 60);
}

/// The part of submit.sh that checks each job's --time against its partition's time limit (the
/// one `partition` names, else the default one, which sinfo marks with `*`) before anything is
/// submitted: a job that asks for more pends for ever (PartitionTimeLimit) while the script exits
/// 0. sinfo prints the limit as `infinite`, MM:SS, H:MM:SS or D-HH:MM:SS; the other spellings of
/// --time (MM, D-HH, D-HH:MM) are read too. Of several partitions (`a,b`) the longest limit counts.
std::string time_limit_check(const std::optional<std::string>& partition) {
  return fmt::format(
      R"sh(# A job whose --time is over its partition's time limit would pend for ever (PartitionTimeLimit),
# so the limit (in minutes; empty: none, or not known) is read before anything is submitted.
partition={0}
limit= limit_name=
if ! command -v sinfo >/dev/null 2>&1; then
  echo "submit.sh: sinfo is not available: the jobs' --time was not checked against the partition's time limit" >&2
else
  if [ -n "$partition" ]; then info=$(sinfo -h -p "$partition" -o %l 2>/dev/null || true)
  else info=$(sinfo -h -o '%P %l' 2>/dev/null || true); fi
  read -r limit_word limit_name <<EOF
$(printf '%s\n' "$info" | awk -v partition="$partition" '
  NF == 2 {{ if ($1 !~ /\*$/) next; partition = substr($1, 1, length($1) - 1); $1 = $2 }}
  {{ t = tolower($1) }}
  t == "infinite" || t == "unlimited" {{ infinite = 1; next }}
  t !~ /^[0-9]+(-[0-9]+)?(:[0-9]+)?(:[0-9]+)?$/ {{ next }}
  {{ days = 0
    if (i = index(t, "-")) {{ days = substr(t, 1, i - 1); n = split(substr(t, i + 1), p, ":"); s = p[1] * 3600 + (n > 1 ? p[2] * 60 : 0) + (n > 2 ? p[3] : 0) }}
    else {{ n = split(t, p, ":"); s = n == 1 ? p[1] * 60 : n == 2 ? p[1] * 60 + p[2] : p[1] * 3600 + p[2] * 60 + p[3] }}
    s += days * 86400; if (!known || s > most) most = s; known = 1 }}
  END {{ word = infinite ? "none" : known ? int(most / 60) : "unknown"; print word, partition }}')
EOF
  case $limit_word in
    none) ;;
    unknown) echo "submit.sh: sinfo gave no time limit for ${{partition:+partition }}${{partition:-the default partition}}: the jobs' --time was not checked against it" >&2 ;;
    *) limit=$limit_word ;;
  esac
fi
hms() {{ printf '%d-%02d:%02d:00' $(($1 / 1440)) $(($1 / 60 % 24)) $(($1 % 60)); }}
too_long=
# fits NODE NEEDED PLANNED STARTUP, in minutes (NEEDED: the planned end and --startup, without
# --time-margin): a job that needs more than the limit is named, and nothing is submitted.
fits() {{
  if [ -z "$limit" ] || [ "$2" -le "$limit" ]; then return 0; fi
  echo "submit.sh: node $1's units are planned to take $(hms "$3"), which with --startup $(hms "$4") is over the time limit $(hms "$limit") of partition $limit_name: Slurm would leave its job pending for ever (PartitionTimeLimit). Plan for more nodes, so that each one's share fits, or export with the --partition of a longer limit" >&2
  too_long=1
}}
# clipped NODE ASKED PLANNED STARTUP: the option that sets the --time of a job asking for more than
# the limit (and needing no more, as fits found) to the limit, and a line that says so.
clipped() {{
  if [ -z "$limit" ] || [ "$2" -le "$limit" ]; then return 0; fi
  echo "submit.sh: $1's job asks for --time=$(hms "$2"), over the time limit $(hms "$limit") of partition $limit_name: it is submitted with --time=$(hms "$limit"), which holds its planned $(hms "$3") and --startup $(hms "$4") but less of --time-margin" >&2
  printf -- '--time=%s' "$limit"
}}
)sh",
      shell_quote(partition.value_or("")));
}

/// The part of submit.sh that reads each node's state with sinfo before anything is submitted:
/// a job for a node that is drained, draining, down, failing or not responding (sinfo's `*`)
/// pends for ever (ReqNodeNotAvail) while the script exits 0, and a CI step waiting for every job
/// hangs. `dynamic` (--claims with --fleet: the other nodes' jobs take its units): the node is
/// named and its job not submitted, unless no node is up. Otherwise nobody else runs its units:
/// the node is named, and nothing is submitted (exit 1).
std::string node_state_check(bool dynamic) {
  return fmt::format(
      R"sh(# A job for a node that cannot take one (drained, down, not responding) would pend for ever
# (ReqNodeNotAvail), so each node's state is read before anything is submitted.
dynamic={0}
unavailable= up=
# available NODE: whether sinfo shows NODE able to start a job (also when sinfo is missing or does
# not know it: sbatch then says so); a node that cannot is named.
available() {{
  command -v sinfo >/dev/null 2>&1 || return 0
  state=$(sinfo -h -N -n "$1" -o %T 2>/dev/null | head -n 1 || true)
  case $state in
    *'*'*) what="not responding ($state)" ;;
    drain* | down* | fail* | inval*) what=$state ;;
    *) up=1; return 0 ;;
  esac
  unavailable="$unavailable $1"
  if [ -n "$dynamic" ]; then
    echo "submit.sh: warning: node $1 is $what (sinfo): its job is not submitted, as it would pend until the node is back (ReqNodeNotAvail); the other nodes' jobs run its units (--claims, --fleet)" >&2
  else
    echo "submit.sh: node $1 is $what (sinfo): its job would pend until the node is back (ReqNodeNotAvail), and no other node runs its units. Resume the node (scontrol update nodename=$1 state=resume), or plan without it (or export with --claims and --fleet, so that the other nodes take its units)" >&2
  fi
  return 1
}}
)sh",
      dynamic ? "1" : "");
}

/// What one node's job needs: when its last unit ends, the time flaky units' reruns may add,
/// and the GRES it asks for.
struct NodeJob {
  double end_s = 0;
  double reruns_s = 0;
  int gpus = 0;
};

/// Each node's job, in one pass over the plan. The GRES: 1 + the highest GPU index planned there,
/// or with the fleet every GPU of the node, since `exec --fleet` hands out any of them (dynamic
/// execution takes units planned elsewhere, a unit that holds the node locks them all); a GPU
/// the job was not given is, inside its cgroup, no GPU at all.
std::map<std::string, NodeJob> node_jobs(const Plan& plan, const Fleet* fleet) {
  std::map<std::string, NodeJob> jobs;
  for (const auto& a : plan.assignments) {
    auto& job = jobs[a.node.str()];
    job.end_s = std::max(job.end_s, a.end_s);
    for (int gpu : a.gpus) job.gpus = std::max(job.gpus, gpu + 1);
  }
  for (const auto& [node, seconds] : rerun_allowance_s(plan)) jobs[node].reruns_s = seconds;
  if (!fleet) return jobs;
  std::map<std::string_view, const Node*> by_name;
  for (const auto& node : fleet->nodes) by_name.emplace(node.name, &node);
  for (auto& [name, job] : jobs) {
    auto it = by_name.find(name);
    if (it == by_name.end())
      throw InputError(
          Position{fleet->source},
          fmt::format("the plan has units on node \"{}\", which this fleet does not have", name));
    job.gpus = std::max(job.gpus, static_cast<int>(it->second->gpus.size()));
  }
  return jobs;
}

/// The whole minutes a node's job asks for: its planned end and the reruns of its flaky units, ×
/// the margin, + the startup.
long asked_minutes(const NodeJob& job, const SlurmOptions& options) {
  return whole_minutes((job.end_s + job.reruns_s) * options.time_margin + options.startup_s);
}

}  // namespace

std::map<std::string, std::string> slurm_scripts(const Plan& plan, const SlurmOptions& options,
                                                 const Fleet* fleet) {
  if (!(options.time_margin >= 1 && options.time_margin <= 100))  // a larger one overflows --time
    throw InputError(Position{"--time-margin"}, "must be a number from 1 to 100");
  if (options.startup_s < 0) throw InputError(Position{"--startup"}, "must be 0 or more seconds");
  if (options.partition) check_sbatch_value("--partition", *options.partition);
  if (options.account) check_sbatch_value("--account", *options.account);
  if (options.gres_extra) check_sbatch_value("--gres-extra", *options.gres_extra);
  const std::string gres_extra = options.gres_extra ? "," + *options.gres_extra : "";
  std::vector<std::string> extra;
  for (const auto& line : options.sbatch_lines) extra.push_back(sbatch_line(line));

  std::map<std::string, std::string> files;
  std::string submit = fmt::format(
      "#!/bin/sh\n"
      "{} submits one job per node and prints \"NODE JOBID\" for each.\n"
      "set -eu\n"
      "cd \"$(dirname \"$0\")\"\n",
      slurm_script_mark);
  submit += time_limit_check(options.partition);
  const auto jobs = node_jobs(plan, fleet);
  const long startup_minutes = (options.startup_s + 59) / 60;
  for (const auto& [node, job] : jobs) {
    check_node_name(node);
    submit += fmt::format("fits {} {} {} {}\n", node, whole_minutes(job.end_s + options.startup_s),
                          whole_minutes(job.end_s), startup_minutes);
  }
  submit += "if [ -n \"$too_long\" ]; then echo 'submit.sh: nothing was submitted' >&2; exit 1; fi\n";
  const bool dynamic = options.claims && options.fleet;
  submit += node_state_check(dynamic);
  for (const auto& [node, job] : jobs) submit += fmt::format("available {} || true\n", node);
  submit +=
      dynamic ? "if [ -z \"$up\" ]; then echo 'submit.sh: no node can take a job: nothing was "
                "submitted' >&2; exit 1; fi\n"
              : "if [ -n \"$unavailable\" ]; then echo 'submit.sh: nothing was submitted' >&2; exit 1; fi\n";
  if (options.claims)
    submit += fmt::format(
        "# The jobs of one submission share a claims directory of their own, --claims/SUBMISSION\n"
        "# (SUBMISSION: this script's argument, such as the CI run's ID, else the time and this shell's\n"
        "# PID): in one an earlier submission used, the units it ran would not run again.\n"
        "submission=${{1:-$(date -u +%Y%m%dT%H%M%SZ)-$$}}\n"
        "printf 'submit.sh: the jobs share the claims directory %s/%s\\n' {0} \"$submission\" >&2\n",
        shell_quote(*options.claims));  // the path only ever as one quoted word: never in "…" or a comment
  for (const auto& [node, job] : jobs) {
    std::string script = fmt::format(
        "#!/bin/bash\n"
        "{4} runs the units planned on {0} with gpuplan exec.\n"
        "#SBATCH --job-name=gpuplan-{0}\n"
        "#SBATCH --nodelist={0}\n"
        "#SBATCH --nodes=1\n"
        "#SBATCH --ntasks=1\n"
        "#SBATCH --exclusive\n"
        "#SBATCH --gres=gpu:{1}{3}\n"
        "#SBATCH --time={2}\n"
        "#SBATCH --output=gpuplan-{0}-%j.out\n"
        "#SBATCH --no-requeue\n",
        node, job.gpus, slurm_time(asked_minutes(job, options)), gres_extra, slurm_script_mark);
    if (options.partition) script += fmt::format("#SBATCH --partition={}\n", *options.partition);
    if (options.account) script += fmt::format("#SBATCH --account={}\n", *options.account);
    for (const auto& line : extra) script += line + "\n";
    script += fmt::format("exec {} exec {} --node {}", shell_quote(options.gpuplan),
                          shell_quote(options.plan_path), shell_quote(node));
    if (options.command) script += " --command " + shell_quote(*options.command);
    if (options.results) script += " --results " + shell_quote(*options.results);
    if (options.claims) script += " --claims " + shell_quote(*options.claims) + "/\"${1:-}\"";  // submit.sh's
    if (options.lease_s) script += fmt::format(" --lease {}", *options.lease_s);
    if (options.fleet) script += " --fleet " + shell_quote(*options.fleet);
    if (options.warn_missing_gpus) script += " --missing-gpus=warn";
    if (!options.bazel_args.empty()) script += " --";
    for (const auto& arg : options.bazel_args) script += " " + shell_quote(arg);
    files[node + ".sbatch"] = script + "\n";
    // A failed sbatch inside printf's arguments would not stop `set -e`: the node's units would
    // never run and the script would exit 0.
    submit += fmt::format(
        "case \" $unavailable \" in *' {0} '*) ;; *)\n"
        "job=$(sbatch --parsable $(clipped {0} {2} {3} {4}) {0}.sbatch{1}) || {{ echo \"submit.sh: sbatch "
        "{0}.sbatch failed; the jobs "
        "printed above were submitted\" >&2; exit 1; }}\n"
        "printf '%s %s\\n' {0} \"$job\"\n"
        ";; esac\n",
        node, options.claims ? " \"$submission\"" : "", asked_minutes(job, options), whole_minutes(job.end_s),
        startup_minutes);
  }
  files["submit.sh"] = submit;
  return files;
}

}  // namespace gpuplan
