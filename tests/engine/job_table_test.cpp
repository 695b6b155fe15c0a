// The job table on its own, with a clock the test moves: ids, the open-work limits, the finished
// jobs kept by count, bytes and age, the shared domains and the circuit facts.
#include <coprove/engine/detail/job_table.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>

namespace {

using namespace coprove::engine;
using detail::job;
using detail::job_table;
using namespace std::chrono_literals;

struct manual_clock {
  std::chrono::steady_clock::time_point now{};
  job_table::clock fn() {
    return [this] { return now; };
  }
};

std::shared_ptr<job> job_of(std::size_t partitions) {
  auto j = std::make_shared<job>();
  j->request.partitions = partitions;
  return j;
}

result_retention keep(std::size_t jobs, std::size_t bytes, std::chrono::milliseconds age) {
  return result_retention{jobs, bytes, age};
}

}  // namespace

TEST_CASE("the job table gives ids from the first and refuses work beyond its limits, changing nothing",
          "[engine][job_table][cpu]") {
  manual_clock clock;
  job_table table(100, {2, 5}, keep(10, 1 << 20, 1h), clock.fn());
  auto first = job_of(3), second = job_of(3), third = job_of(2);
  table.add(first);
  CHECK(first->id == 100);
  CHECK_THROWS_WITH(table.add(second), Catch::Contains("3 unfinished partitions; 3 more exceed its limit of 5") &&
                                           Catch::Contains("max_open_partitions"));
  CHECK(second->id == 0);
  table.add(third);
  CHECK(third->id == 101);
  CHECK_THROWS_AS(table.add(job_of(0)), queue_full_error);  // two jobs open: the job limit
  CHECK(table.counts().open_partitions == 5);
  CHECK(table.counts().queued == 2);
  CHECK(table.queued().size() == 2);

  table.set_error(*first, "it broke");
  CHECK(table.finish(*first, job_state::failed) == "it broke");
  CHECK(table.status(100)->state == job_state::failed);
  CHECK(table.status(100)->error == "it broke");
  CHECK(table.counts().open_partitions == 2);
  CHECK(table.counts().finished == 1);
  CHECK(table.unfinished().size() == 1);
  CHECK_FALSE(table.all_finished());
  table.add(second);  // room again
  CHECK(second->id == 102);
  CHECK_FALSE(table.expired(102));
  CHECK_FALSE(table.expired(103));  // never given
  CHECK_FALSE(table.expired(99));
  CHECK_FALSE(table.status(103));
}

TEST_CASE("finished jobs are forgotten oldest first by count, by bytes and by age, when next looked at",
          "[engine][job_table][cpu]") {
  manual_clock clock;
  SECTION("count") {
    job_table table(1, {}, keep(1, 1 << 20, 1h), clock.fn());
    auto a = job_of(1), b = job_of(1);
    table.add(a);
    table.add(b);
    table.finish(*a, job_state::done);
    CHECK(table.find(1) == a);
    table.finish(*b, job_state::done);
    CHECK_FALSE(table.find(1));
    CHECK(table.expired(1));
    CHECK(table.find(2) == b);
    CHECK(table.counts().expired == 1);
  }
  SECTION("bytes") {
    job_table table(1, {}, keep(10, 1, 1h), clock.fn());
    auto a = job_of(1);
    table.add(a);
    table.finish(*a, job_state::done);  // a job holds more than a byte: gone at once
    CHECK(table.expired(1));
    CHECK(table.counts().retained_bytes == 0);
  }
  SECTION("age") {
    job_table table(1, {}, keep(10, 1 << 20, 1000ms), clock.fn());
    auto a = job_of(1);
    table.add(a);
    table.finish(*a, job_state::cancelled);
    CHECK(table.counts().retained_bytes > 0);
    clock.now += 999ms;
    CHECK(table.status(1));
    clock.now += 1ms;
    CHECK_FALSE(table.status(1));
    CHECK(table.expired(1));
    CHECK(table.all_finished());
  }
}

TEST_CASE("one evaluation domain a size is shared, and circuit facts are remembered", "[engine][job_table][cpu]") {
  job_table table(1, {}, {});
  const auto d10 = table.domain_for(10);
  CHECK(d10->size() == 1024);
  CHECK(table.domain_for(10) == d10);
  CHECK(table.domain_for(11) != d10);
  CHECK(table.domains() == 2);
  CHECK_FALSE(table.facts("mimc", 10));
  table.remember_facts("mimc", 10, {42, "mimc/10", true});
  REQUIRE(table.facts("mimc", 10));
  CHECK(table.facts("mimc", 10)->working_set == 42);
  CHECK_FALSE(table.facts("mimc", 11));
}
