#pragma once
// The claims directory: how the `exec`s of one plan on different nodes agree that each unit
// runs exactly once, through a directory all of them see (the plan's shared file system).
//
// Only operations that are atomic on NFS are trusted: a claim is a hard link() of a file
// this process wrote, which fails when the name exists (and, as NFS may answer a retried
// link with an error, a link count of 2 on our file says it did work). Unit U's claims are
// DIR/H.0, DIR/H.1, ... (H: a hash of U's id), the highest one current; its holder renews
// its modification time while the unit runs; another node that finds it older than the
// lease takes the unit over by linking the next number. DIR/H.done marks it run. Ages are
// measured against a file this node touches, so the nodes' clocks need not agree.
//
// run-under counts each node's ended launches of a unit (Bazel's attempts of a flaky test) as
// DIR/launch-H.0, .1, ... (H: a hash of the node's name and the unit's id).
//
// DIR/plan.stamp names the plan the directory's claims are of (belong_to()): the first exec or launch
// links it, and one of another plan is refused, whose units of the same ids would be taken for
// done and not run.
//
// An `exec` also holds its node's name (hold_node()): DIR/node-H.0, .1, ... (H: a hash of the
// name), linked and renewed as a claim is, holding "NODE HOST PID PIDNS" (PIDNS: the PID namespace,
// in which alone PID names the process). A second exec of the same
// node finds a fresh one and is refused: it would hand out the same GPUs again.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan::os {

class Claims {
 public:
  /// Creates `dir` if needed. Throws InputError when it cannot be written.
  Claims(std::string dir, std::string node, double lease_s);
  /// Gives up every claim still held (abandon()): the units did not run to their end here.
  ~Claims();
  Claims(const Claims&) = delete;  // one owner of the claims a destructor gives up
  Claims& operator=(const Claims&) = delete;

  /// Makes the directory's claims those of the plan `stamp` tells (cli::plan_file_stamp), named
  /// `plan` in messages: the first call in a directory records it in DIR/plan.stamp. Throws InputError,
  /// naming both plans and the directory, when the directory holds another plan's claims: a unit
  /// of the same id marked done there would not run now, and the run would pass without it.
  /// The directory also keeps the first caller's lease, which every node must judge and renew
  /// by: when this one's differs, it is set to the directory's, which is returned (else nullopt).
  std::optional<double> belong_to(const std::string& stamp, const std::string& plan);
  /// The lease this node judges others' claims by and renews its own within.
  double lease_s() const { return lease_s_; }

  /// What another node's hold on a unit looks like from here.
  enum class State { free, ours, held, expired, done };
  /// Throws InputError, naming it, when the unit's current claim or done mark is not a regular
  /// file (a FIFO someone made there): never judged by its time as a live claim.
  State state(const std::string& unit);

  /// Takes the unit for this node if it is free or its holder's lease expired; true when
  /// this node holds it now (also when it already did). Throws InputError as state() does, and
  /// when the claim cannot be written (a full disk).
  bool claim(const std::string& unit);
  /// Renews the lease of every unit this node holds, and tries again each done mark done() could
  /// not write. Returns the units whose done mark it wrote now.
  std::vector<std::string> renew();
  /// The unit ran here (whatever its outcome, `exit_status`): no node runs it again. Returns ""
  /// once its done mark is written; else why not, naming the mark and the errno (EIO on a file
  /// server, a full disk whose claim file cannot be rewritten either), after `done_tries` tries. The unit
  /// then stays held by this node, its lease renewed and its mark tried again by renew(): another node that
  /// took it over once the lease ran out would run a unit that already ran. A Claims that goes with such a
  /// unit leaves its claim as last renewed, for one more lease.
  std::string done(const std::string& unit, int exit_status = 0);
  static constexpr int done_tries = 3;  ///< how often done() tries a mark before it says why not
  /// The units that ran here whose done mark is not written yet (done() could not): id, why not.
  std::vector<std::pair<std::string, std::string>> unmarked() const;
  /// When this Claims was made, by the file system's clock (that of the done marks' times).
  double started_s() const { return started_s_; }
  /// Who ran a unit that is done, and how it ended; nullopt when it is not done.
  struct Ran {
    std::string node;
    int exit_status = 0;
    double finished_s = 0;  ///< the done mark's modification time (the file server's clock)
  };
  std::optional<Ran> ran(const std::string& unit) const;
  /// The node whose claim on the unit is current; empty when none.
  std::string holder(const std::string& unit) const;
  /// This node gives the unit up without running it to its end (stopped): its lease ends now.
  void abandon(const std::string& unit);
  /// How many launches of `unit` on this node have ended (launched()): Bazel starts a flaky
  /// test again on the node whose attempt failed, and each attempt is a unit of its own.
  int launches(const std::string& unit) const;
  /// One more launch of `unit` on this node has ended. Bazel starts one attempt of a test at a
  /// time on a node, so this count of the node's own needs no claim.
  void launched(const std::string& unit);
  /// Makes this process the one live holder of its node's name in the directory, renewed by
  /// renew() and given up when this object goes. Takes over a hold older than the lease, or
  /// one of a process of this host and PID namespace that is gone. Throws InputError, naming the node, the
  /// directory and the other holder, when another process holds it.
  void hold_node();

 private:
  std::string path(const std::string& unit, const std::string& suffix) const;
  int current(const std::string& unit) const;  ///< the highest claim number, -1 when none
  /// state(), and in `n` the claim number it judged (-1: none), which claim() links after.
  State judge(const std::string& unit, int& n);
  std::string launch_base(const std::string& unit) const;  ///< DIR/launch-H: this node's count of `unit`
  double fs_now();  ///< the file system's clock, by touching our own file
  /// Links a file of this node's holding `text` as `target`: 0 when linked, else link()'s errno
  /// (EEXIST: the name is another's). Throws InputError when the file cannot be written.
  int link_new(const std::string& target, const std::string& text);
  /// One try at the done mark of `unit`: "" when it is there, else why not.
  std::string mark_done(const std::string& unit, const std::string& text);

  std::string dir_, node_;
  double started_s_ = 0;
  double lease_s_;
  std::map<std::string, std::string> held_;  ///< unit → our claim file
  /// Units that ran here whose done mark is not written yet: their mark's text, why the last try failed.
  std::map<std::string, std::pair<std::string, std::string>> unmarked_;
  std::string node_hold_;  ///< our hold on the node's name; empty: none
};

}  // namespace gpuplan::os
