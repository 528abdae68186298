// ns-3 (3.37) reference dumbbell for the celltcp speed benchmark.
//
// Topology (all links point-to-point, full duplex):
//
//   sender 0 --\                                   /-- receiver
//   sender 1 ---+-- router L ==bottleneck== router R
//   ...        /
//   sender N-1
//
//   sender i <-> L : --accessRate (100 Mbit/s), --accessDelay (1 ms)
//   L <-> R        : --rate (10 Mbit/s), --delay (23 ms)   (the bottleneck)
//   R <-> receiver : --accessRate (100 Mbit/s), --accessDelay (1 ms)
//   base RTT = 2 * (accessDelay + delay + accessDelay) = 50 ms
//
// Queueing: no traffic-control queue discs anywhere (they are uninstalled after
// address assignment), so each link is a plain FIFO drop-tail device queue.
// The L->R bottleneck device queue holds --queuePkts packets (default 42, about
// one BDP of 1500-byte packets: 10 Mbit/s * 50 ms = 62.5 KB); every other device
// queue holds 1000 packets and never drops in this scenario.
//
// Traffic: N long-lived bulk TCP flows, flow i from sender i to receiver port
// 5000+i (BulkSendApplication, unlimited -> PacketSink). Flow i starts at
// i * startSpread / N seconds. Linux-like TCP: MSS 1448 bytes (1500-byte IP
// packets with the timestamp option), SACK on, timestamps on, window scaling on,
// initial cwnd 10, delayed ACK every 2nd segment / 40 ms, min RTO 200 ms,
// initial (SYN) RTO 1 s, 6 SYN retries, 15 data retries, 4 MB send and receive
// buffers (never the limit).
//
// Output: one JSON line on stdout (see README). Wall time is measured with
// std::chrono::steady_clock around Simulator::Run() only; setup time is
// reported separately.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

// Packets dropped at router L. With no queue disc installed, ns-3's traffic
// control layer drops a packet when the device queue is full (stopped), so the
// bottleneck's drop-tail drops show up here rather than in the device queue.
static uint64_t g_leftDrops = 0;

static void
LeftTcDrop(Ptr<const Packet>)
{
    ++g_leftDrops;
}

static std::string
JsonDouble(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.9g", v);
    return buf;
}

int
main(int argc, char* argv[])
{
    uint32_t flows = 1;
    double duration = 60.0;
    std::string rate = "10Mbps";
    std::string delay = "23ms";
    std::string accessRate = "100Mbps";
    std::string accessDelay = "1ms";
    uint32_t queuePkts = 42;
    std::string cc = "cubic";
    double startSpread = 1.0;
    uint32_t segmentSize = 1448;
    uint32_t sendSize = 131072;
    uint32_t bufBytes = 4 * 1024 * 1024;
    uint32_t seed = 1;

    auto setupStart = std::chrono::steady_clock::now();

    CommandLine cmd(__FILE__);
    cmd.AddValue("flows", "number of bulk TCP flows (= number of sender hosts)", flows);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("rate", "bottleneck rate (ns-3 DataRate string)", rate);
    cmd.AddValue("delay", "bottleneck one-way propagation delay", delay);
    cmd.AddValue("accessRate", "rate of every access link", accessRate);
    cmd.AddValue("accessDelay", "one-way delay of every access link", accessDelay);
    cmd.AddValue("queuePkts", "bottleneck drop-tail queue size in packets", queuePkts);
    cmd.AddValue("cc", "congestion control: cubic | newreno | bbr", cc);
    cmd.AddValue("startSpread", "flow i starts at i*startSpread/flows seconds", startSpread);
    cmd.AddValue("segmentSize", "TCP MSS in bytes", segmentSize);
    cmd.AddValue("sendSize", "bytes per BulkSend write", sendSize);
    cmd.AddValue("buf", "TCP send/receive buffer bytes", bufBytes);
    cmd.AddValue("seed", "ns-3 RNG run number", seed);
    cmd.Parse(argc, argv);

    if (flows == 0 || flows > 60000 || duration <= 0)
    {
        std::cerr << "dumbbell: --flows must be in 1..60000 and --duration > 0\n";
        return 2;
    }

    std::string ccType;
    if (cc == "cubic")
    {
        ccType = "ns3::TcpCubic";
    }
    else if (cc == "newreno")
    {
        ccType = "ns3::TcpNewReno";
    }
    else if (cc == "bbr")
    {
        ccType = "ns3::TcpBbr";
    }
    else
    {
        std::cerr << "dumbbell: unknown --cc=" << cc << " (cubic|newreno|bbr)\n";
        return 2;
    }

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    // Linux-like TCP defaults.
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TypeId::LookupByName(ccType)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segmentSize));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(bufBytes));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(bufBytes));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(40)));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    // Linux: initial (SYN) RTO 1 s (ns-3 default 3 s), tcp_syn_retries 6,
    // tcp_retries2 15 (ns-3 default DataRetries 6 aborts starved flows early).
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(1)));
    Config::SetDefault("ns3::TcpSocket::ConnCount", UintegerValue(6));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(15));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    if (cc == "bbr")
    {
        // BBR paces (ns-3's TcpBbr also turns pacing on by itself). Caveat: in
        // this scenario ns-3 3.37's TcpBbr stalls after its first RTO with
        // MinRto 200 ms (about 0.24 Mbit/s goodput); see bench/README.md.
        Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(true));
    }

    NodeContainer senders;
    senders.Create(flows);
    NodeContainer routers;
    routers.Create(2);
    Ptr<Node> left = routers.Get(0);
    Ptr<Node> right = routers.Get(1);
    Ptr<Node> receiver = CreateObject<Node>();

    InternetStackHelper stack;
    stack.Install(senders);
    stack.Install(routers);
    stack.Install(receiver);

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue(accessRate));
    access.SetChannelAttribute("Delay", StringValue(accessDelay));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1000p"));

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(rate));
    bottleneck.SetChannelAttribute("Delay", StringValue(delay));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1000p"));

    Ipv4AddressHelper addr;
    TrafficControlHelper tch;

    // Bottleneck L <-> R. Device 0 (on L) is the forward (data) direction.
    NetDeviceContainer bnDev = bottleneck.Install(left, right);
    addr.SetBase("10.255.0.0", "255.255.255.252");
    addr.Assign(bnDev);
    tch.Uninstall(bnDev);
    Ptr<Queue<Packet>> bnQueue = DynamicCast<PointToPointNetDevice>(bnDev.Get(0))->GetQueue();
    bnQueue->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, queuePkts));

    // Receiver access R <-> receiver.
    NetDeviceContainer rxDev = access.Install(right, receiver);
    addr.SetBase("10.254.0.0", "255.255.255.252");
    Ipv4InterfaceContainer rxIf = addr.Assign(rxDev);
    tch.Uninstall(rxDev);
    Ipv4Address sinkAddr = rxIf.GetAddress(1);

    // Sender access links: flow i gets 10.<1 + i/256>.<i%256>.0/24.
    for (uint32_t i = 0; i < flows; ++i)
    {
        NetDeviceContainer d = access.Install(senders.Get(i), left);
        std::ostringstream net;
        net << "10." << (1 + i / 256) << "." << (i % 256) << ".0";
        addr.SetBase(net.str().c_str(), "255.255.255.0");
        addr.Assign(d);
        tch.Uninstall(d);
    }

    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    if (!left->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
            "TcDrop",
            MakeCallback(&LeftTcDrop)))
    {
        std::cerr << "dumbbell: could not connect TrafficControlLayer::TcDrop\n";
        return 1;
    }

    std::vector<Ptr<PacketSink>> sinks;
    sinks.reserve(flows);
    for (uint32_t i = 0; i < flows; ++i)
    {
        uint16_t port = 5000 + i;
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sinkHelper.Install(receiver);
        sa.Start(Seconds(0.0));
        sinks.push_back(DynamicCast<PacketSink>(sa.Get(0)));

        BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(sinkAddr, port));
        src.SetAttribute("MaxBytes", UintegerValue(0));
        src.SetAttribute("SendSize", UintegerValue(sendSize));
        ApplicationContainer ca = src.Install(senders.Get(i));
        ca.Start(Seconds(startSpread * i / flows));
    }

    Simulator::Stop(Seconds(duration));

    auto runStart = std::chrono::steady_clock::now();
    Simulator::Run();
    auto runEnd = std::chrono::steady_clock::now();

    double wall = std::chrono::duration<double>(runEnd - runStart).count();
    double setupWall = std::chrono::duration<double>(runStart - setupStart).count();
    uint64_t events = Simulator::GetEventCount();
    double simSeconds = Simulator::Now().GetSeconds();

    std::vector<uint64_t> rxBytes;
    uint64_t total = 0;
    for (auto& s : sinks)
    {
        rxBytes.push_back(s->GetTotalRx());
        total += s->GetTotalRx();
    }

    uint64_t bnDrops = bnQueue->GetTotalDroppedPackets() + g_leftDrops;
    uint64_t bnSent = bnQueue->GetTotalReceivedPackets();

    Simulator::Destroy();

    std::ostringstream js;
    js << "{\"simulator\":\"ns-3.37\"";
    js << ",\"scenario\":\"dumbbell\"";
    js << ",\"cc\":\"" << cc << "\"";
    js << ",\"flows\":" << flows;
    js << ",\"rate\":\"" << rate << "\",\"delay\":\"" << delay << "\"";
    js << ",\"access_rate\":\"" << accessRate << "\",\"access_delay\":\"" << accessDelay << "\"";
    js << ",\"queue_pkts\":" << queuePkts;
    js << ",\"sim_seconds\":" << JsonDouble(simSeconds);
    js << ",\"wall_seconds\":" << JsonDouble(wall);
    js << ",\"setup_wall_seconds\":" << JsonDouble(setupWall);
    js << ",\"sim_per_wall\":" << JsonDouble(wall > 0 ? simSeconds / wall : 0.0);
    js << ",\"events\":" << events;
    js << ",\"events_per_wall_second\":" << JsonDouble(wall > 0 ? events / wall : 0.0);
    js << ",\"bottleneck_enqueued_pkts\":" << bnSent;
    js << ",\"bottleneck_drops\":" << bnDrops;
    js << ",\"goodput_bps_total\":" << JsonDouble(total * 8.0 / duration);
    double sumX = 0, sumX2 = 0;
    for (uint64_t b : rxBytes)
    {
        sumX += double(b);
        sumX2 += double(b) * double(b);
    }
    double jain = sumX2 > 0 ? sumX * sumX / (rxBytes.size() * sumX2) : 0.0;
    js << ",\"jain_fairness\":" << JsonDouble(jain);
    js << ",\"per_flow_goodput_bps\":[";
    for (size_t i = 0; i < rxBytes.size(); ++i)
    {
        if (i)
        {
            js << ",";
        }
        js << JsonDouble(rxBytes[i] * 8.0 / duration);
    }
    js << "]}";
    std::cout << js.str() << std::endl;
    return 0;
}
