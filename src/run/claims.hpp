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
#include <map>
#include <optional>
#include <string>

namespace gpuplan::os {

class Claims {
 public:
  /// Creates `dir` if needed. Throws InputError when it cannot be written.
  Claims(std::string dir, std::string node, double lease_s);
  ~Claims();

  /// What another node's hold on a unit looks like from here.
  enum class State { free, ours, held, expired, done };
  State state(const std::string& unit);

  /// Takes the unit for this node if it is free or its holder's lease expired; true when
  /// this node holds it now (also when it already did).
  bool claim(const std::string& unit);
  /// Renews the lease of every unit this node holds and has not finished.
  void renew();
  /// The unit ran here (whatever its outcome, `exit_status`): no node runs it again.
  void done(const std::string& unit, int exit_status = 0);
  /// Who ran a unit that is done, and how it ended; nullopt when it is not done.
  struct Ran {
    std::string node;
    int exit_status = 0;
  };
  std::optional<Ran> ran(const std::string& unit) const;
  /// The node whose claim on the unit is current; empty when none.
  std::string holder(const std::string& unit) const;
  /// This node gives the unit up without running it to its end (stopped): its lease ends now.
  void abandon(const std::string& unit);

 private:
  std::string path(const std::string& unit, const std::string& suffix) const;
  int current(const std::string& unit) const;  ///< the highest claim number, -1 when none
  double fs_now();                             ///< the file system's clock, by touching our own file
  bool link_new(const std::string& target, const std::string& text);

  std::string dir_, node_;
  double lease_s_;
  std::map<std::string, std::string> held_;  ///< unit → our claim file
  long counter_ = 0;
};

}  // namespace gpuplan::os
